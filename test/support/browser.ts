import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/**
 * Debian's chromium, found through SVC_CHROMIUM or on PATH (`.ci/run` installs it with apt-get). A missing
 * browser fails the run: the pages are tested the way a person sees them, or not at all.
 */
export function chromiumPath(): string {
  const configured = process.env.SVC_CHROMIUM
  if (configured) {
    if (!existsSync(configured)) throw new Error(`SVC_CHROMIUM=${configured} does not exist`)
    return configured
  }
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim()
    } catch {
      // not this name
    }
  }
  throw new Error(
    "No chromium on PATH: install Debian's chromium (apt-get install chromium) or set SVC_CHROMIUM",
  )
}

/** Headless, with nothing of Chromium's own background traffic (this machine's network is closed). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
