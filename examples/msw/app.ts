// The page's script: MSW's service worker answers every request under baseUrl with the
// Petstore API, in the page itself. The fetches below never leave the browser.
import { setupWorker } from 'msw/browser'
import { petstoreHandlers } from 'petstore-server/msw'

const baseUrl = 'https://api.example.test/v1'
const headers = { authorization: 'Bearer demo-key', 'content-type': 'application/json' }

const worker = setupWorker(...petstoreHandlers({ baseUrl, keys: ['demo-key'] }))
// mockServiceWorker.js must be served from the page's origin, at its root (see README.md).
await worker.start({ onUnhandledRequest: 'bypass' })

const created = await fetch(`${baseUrl}/pets`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
})
const listed = await fetch(`${baseUrl}/pets`, { headers })
const refused = await fetch(`${baseUrl}/pets`)

const output = document.querySelector('#output')
if (output) {
  output.textContent = [
    `POST /pets → ${created.status} ${JSON.stringify(await created.json())}`,
    `GET /pets → ${listed.status} ${JSON.stringify(await listed.json())}`,
    `GET /pets without a key → ${refused.status} ${(await refused.json()).code}`,
  ].join('\n')
}
