/**
 * The API reference page in a real browser: Debian's Chromium, driven by
 * playwright-core, on the built binary. Outside CI a machine without
 * Chromium skips this with a message; under CI it fails.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, it } from 'node:test'
import { DOCS_CSP } from '../src/http/docs-page.js'
import { CHROMIUM, launchChromium } from './helpers/chromium.js'
import { underCi } from './helpers/ci.js'
import { killAll, type RunningServer, repoRoot, startScript } from './helpers/spawn-server.js'

const BINARY = join(repoRoot, 'dist/bin/petstore-server.js')
const KEY = `docs-key-${Math.random().toString(36).slice(2)}`

/** Why this run cannot test the page, or undefined when it can. */
function missing(): string | undefined {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`
  if (!existsSync(BINARY)) return `no built binary at ${BINARY} (npm run build)`
  return undefined
}

const reason = missing()
if (reason && underCi) throw new Error(`the browser test cannot run under CI: ${reason}`)

const tmp = mkdtempSync(join(tmpdir(), 'petstore-docs-'))
let server: RunningServer | undefined

before(async () => {
  if (reason) return
  // The built binary itself, on this Node: what `npx petstore-server` runs.
  server = await startScript(BINARY, ['--port', '0', '--db', 'memory', '--key', KEY], undefined, {
    command: process.execPath,
    args: [],
  })
})

after(async () => {
  await server?.stop()
  await killAll()
  // The screenshot stays for a look; the browser profile goes.
  rmSync(join(tmp, 'profile'), { recursive: true, force: true })
})

it('the reference page renders, shows the operations and runs listPets with a typed key', {
  skip: reason && `skipped: ${reason}`,
  timeout: 120_000,
}, async () => {
  const origin = server!.origin
  const created = await fetch(`${origin}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
  })
  assert.equal(created.status, 201)

  const context = await launchChromium(join(tmp, 'profile'))
  try {
    const requested: string[] = []
    const problems: string[] = []
    context.on('request', (request) => requested.push(request.url()))
    const page = context.pages()[0] ?? (await context.newPage())
    // Every CSP violation, as the page itself hears of it (the init script runs outside the CSP).
    await page.addInitScript(() => {
      const seen: string[] = []
      Object.assign(window, { cspViolations: seen })
      document.addEventListener('securitypolicyviolation', (event) => {
        seen.push(`${event.violatedDirective} ${event.blockedURI}`)
      })
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      // A CSP violation is reported on the console as an error.
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })

    const response = await page.goto(`${origin}/v1/docs`)
    assert.equal(response?.status(), 200)
    assert.equal(response?.headers()['content-security-policy'], DOCS_CSP)

    // The three operations, by their ids (displayOperationId), whatever tag they sit under.
    const operation = (id: string) =>
      page.locator('.opblock').filter({ has: page.locator('.opblock-summary-operation-id', { hasText: id }) })
    for (const id of ['listPets', 'createPet', 'getPet']) {
      await operation(id).first().waitFor({ timeout: 30_000 })
    }
    // The page runs under its CSP without breaking it: nothing inline, no eval, nothing from elsewhere.
    assert.deepEqual(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations), [])
    assert.deepEqual(problems, [])

    // getPet is shown as deprecated; the others are not.
    assert.equal(await operation('getPet').locator('xpath=self::*[contains(@class, "opblock-deprecated")]').count(), 1)
    assert.equal(await page.locator('.opblock-deprecated').count(), 1)

    // The key, typed into the Authorize dialog.
    await page.locator('.auth-wrapper button.authorize').click()
    await page.locator('.modal-ux input').first().fill(KEY)
    await page.locator('.modal-ux button.authorize').click()
    await page.locator('.modal-ux button.btn-done').click()

    // listPets, run from the page.
    const list = operation('listPets')
    await list.locator('.opblock-summary').first().click()
    await list.locator('button.try-out__btn').click()
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/v1/pets' && r.request().method() === 'GET',
    )
    await list.locator('button.execute').click()
    const answer = await answered
    assert.equal(answer.status(), 200)
    assert.equal(await answer.request().headerValue('authorization'), `Bearer ${KEY}`)
    const status = list.locator('.live-responses-table tr.response .response-col_status').first()
    await status.waitFor()
    assert.equal((await status.innerText()).trim(), '200')
    assert.match(await list.locator('.live-responses-table').innerText(), /Rex/)

    const screenshot = join(tmp, 'docs.png')
    await page.screenshot({ path: screenshot, fullPage: true })
    console.log(`screenshot: ${screenshot}`)

    // Everything came from the server itself (or from data: URLs inside its own files).
    const foreign = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))
    assert.deepEqual(foreign, [])
    assert.deepEqual(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations), [])
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
