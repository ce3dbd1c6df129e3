/**
 * Debian's Chromium, driven by playwright-core, for the browser tests. The
 * network is closed, so the browser is started with nothing that would reach
 * out on its own, on a new empty profile.
 */
import { existsSync } from 'node:fs'
import { type BrowserContext, chromium } from 'playwright-core'
import { underCi } from './ci.js'

export const CHROMIUM = '/usr/bin/chromium'

/** Why Chromium cannot run here, or undefined when it can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`
}

/**
 * A test that needs what `reason` says is missing: skipped with that message,
 * except under CI, where the whole file fails at once instead.
 */
export function skipUnlessCi(reason: string | undefined, what: string): string | false {
  if (reason && underCi) throw new Error(`${what} cannot run under CI: ${reason}`)
  return reason ? `skipped: ${reason}` : false
}

/** Headless Chromium on the profile directory `profile` (created if missing). */
export function launchChromium(profile: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-gpu',
    ],
  })
}
