// Cloudflare Workers: the Petstore API as a Worker, with pets in D1. Configured by
// examples/cloudflare/wrangler.jsonc; the keys are a secret, comma-separated:
//
//   npx wrangler d1 create petstore          # then put its id in wrangler.jsonc
//   npx wrangler secret put PETSTORE_API_KEYS
//   npx wrangler secret put PETSTORE_CURSOR_SECRET   # any long random string
//   npx wrangler deploy
import { createPetstore, type FetchHandler } from 'petstore-server'
import { type D1Database, d1Store } from 'petstore-server/d1'

interface Env {
  DB: D1Database
  PETSTORE_API_KEYS: string
  /** Signs the list's cursors. Cloudflare serves one Worker from many isolates: they must share it. */
  PETSTORE_CURSOR_SECRET: string
}

// One handler per isolate: bindings are the same for every request it serves.
let petstore: FetchHandler | undefined

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    petstore ??= createPetstore({
      store: d1Store(env.DB),
      keys: (env.PETSTORE_API_KEYS ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter(Boolean),
      cursorSecret: env.PETSTORE_CURSOR_SECRET,
    })
    return petstore(request)
  },
}
