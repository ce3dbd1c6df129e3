/**
 * Run by test/request-shape.test.ts under `node --allow-natives-syntax`:
 * reads a page of a SQLite store (a real file) through its synchronous hot
 * path until V8 has optimized it, and prints whether the pages it returns
 * keep fast properties and one hidden class. Built with an object spread
 * (`{ ...withoutLastPet(json), more: true }`), each page got a map of its own
 * once optimized on Node 20 (V8 11.3; Node 22's V8 keeps one, so there this
 * passes either way), and the SQLite list promoted ~100 KB of young objects to
 * old space per scavenge (see README → Performance). Prints JSON on stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sqliteStore } from '../../src/store/sql/sqlite.js'
import { builtInOf, type JsonPage } from '../../src/store/store.js'
import { fast, sameMap } from './v8-shape.js'

const directory = mkdtempSync(join(tmpdir(), 'petstore-page-shape-'))
const store = sqliteStore({ path: join(directory, 'pets.db') })
for (let i = 0; i < 25; i++) await store.create({ name: `pet-${i}`, categoryId: i })
const own = builtInOf(store)
if (own === undefined || own.page({ limit: 20 }) instanceof Promise) {
  throw new Error('the SQLite store offers no synchronous pages')
}
const page = (): JsonPage => own.page({ limit: 20 }) as JsonPage
// Long enough for TurboFan: the map changed only in optimized code.
for (let i = 0; i < 30_000; i++) page()
const pages = Array.from({ length: 5 }, page)
await store.close?.()
rmSync(directory, { recursive: true, force: true })
process.stdout.write(
  JSON.stringify({
    more: pages.every((each) => each.more),
    fast: pages.every((each) => fast(each)),
    oneMap: pages.every((each) => sameMap(pages[0], each)),
  }),
)
