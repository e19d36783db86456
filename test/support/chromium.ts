import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/** Debian's Chromium (apt-get install -y chromium); a test tool never downloads its own browser here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Whether the browser tests can run here; when not, says once which suite is skipped and why. */
export function chromiumAvailable(suite: string): boolean {
  const available = existsSync(CHROMIUM)
  if (!available) console.warn(`skipping ${suite}: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`)
  return available
}

/**
 * Headless Chromium as this machine needs it: no sandbox (root), and none of the background traffic that its closed
 * network refuses. `extraArgs` add to those.
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  })
}
