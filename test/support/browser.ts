// Debian's chromium driven by playwright-core (no browser download): headless, sandbox off (tests run as
// root in CI), quiet (no background networking, updates or sync), and a fresh profile directory each time.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A browser context with its own profile; `javaScript: false` for the no-script flows. */
export async function launchBrowser(o: { javaScript?: boolean; width?: number; height?: number } = {}): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    javaScriptEnabled: o.javaScript ?? true,
    viewport: { width: o.width ?? 1200, height: o.height ?? 900 },
    acceptDownloads: true,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}
