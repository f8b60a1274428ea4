// The web UI in a real browser (Debian's chromium) against a whole daemon on the real engine: the setup
// wizard, login/logout, an app deployed v1 then v2 watched live, logs, a secret masked then revealed,
// rollback, a linked service, a backup downloaded, a token used; the key flows without JavaScript; every
// input labelled; a form post without its CSRF token refused. Screenshots of every page go to
// .test-cache/ui-screenshots (gitignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1, WEB_V2 } from '../support/images.js';
import { serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

const SHOTS = join(process.cwd(), '.test-cache', 'ui-screenshots');
const PASSWORD = 'ui test password 1';
let t: TestDaemon;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ensureTestImages();
  t = await startTestDaemon('ui', { ...serviceImageEnv(), SVC_DEPLOY_WATCH_SECONDS: '0' }, { setup: false });
  browser = await launchBrowser();
  page = await browser.context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

/** Every visible input, select and textarea has a label (or an accessible name). */
async function allLabelled(p: Page) {
  const unlabelled = await p.$$eval('input:not([type=hidden]), select, textarea', (els) =>
    els.filter((e) => (e as HTMLInputElement).labels?.length === 0 && !e.getAttribute('aria-label')).map((e) => e.outerHTML),
  );
  expect(unlabelled).toEqual([]);
}

const byLabel = (p: Page, label: string) => p.getByLabel(label, { exact: true });

/** Opens a tab of the app page by its link (issue 34: each tab its own URL, plain links). */
async function tab(p: Page, label: string) {
  await p.getByRole('navigation', { name: 'App' }).getByRole('link', { name: label, exact: true }).click();
  await p.locator('nav.tabs [aria-current=page]').getByText(label, { exact: true }).waitFor();
}

/** The app page's tabs, as the issue lists them. */
const TABS = ['Overview', 'Deploys', 'Logs', 'Environment', 'Services', 'Jobs & volumes', 'Metrics', 'Terminal', 'Previews', 'Settings'];

async function waitDeploy(p: Page, text: string) {
  await p.getByRole('log', { name: 'Deploy progress' }).getByText(text).first().waitFor({ timeout: 60_000 });
}

describe('web UI in a browser', () => {
  let appId = 0;

  it('runs the setup wizard, then logs out and in', async () => {
    await page.goto(t.url + '/');
    expect(new URL(page.url()).pathname).toBe('/setup');
    await allLabelled(page);
    await shot('setup');
    await byLabel(page, 'Username').fill('admin');
    await byLabel(page, 'Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').getByText('Welcome').waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('status').getByText('You are logged out').waitFor();
    await allLabelled(page);
    await shot('login');
    await byLabel(page, 'Username').fill('admin');
    await byLabel(page, 'Password').fill('wrong password!');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').getByText('wrong username or password').waitFor();
    await byLabel(page, 'Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('link', { name: 'New app' }).waitFor();
  });

  it('creates an app and watches v1 then v2 deploy live, with logs', async () => {
    await page.getByRole('link', { name: 'New app' }).click();
    await allLabelled(page);
    await shot('app-new');
    const port = await freePort();
    await byLabel(page, 'Name').fill('ui-web');
    await byLabel(page, 'Image').fill(WEB_V1);
    await byLabel(page, 'Internal port').fill('3000');
    await byLabel(page, 'Port').fill(String(port));
    await page.getByRole('button', { name: 'Create app' }).click();
    await page.getByRole('status').getByText('App created').waitFor();
    appId = Number(/\/apps\/(\d+)/.exec(page.url())![1]);
    await allLabelled(page);

    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await waitDeploy(page, 'finalize');
    await page.locator('#app-facts').getByText('active').waitFor({ timeout: 15_000 });
    await tab(page, 'Logs');
    await page.getByRole('log', { name: 'Logs' }).getByText('svc-test web v1 starting').waitFor({ timeout: 20_000 });
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toContain('v1');

    // Deploy is in the header of every tab; it lands on the Overview, which shows the progress.
    await byLabel(page, 'Image').fill(WEB_V2);
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    // Watched live: the events arrive through the stream while the page stays open.
    await waitDeploy(page, 'health_check');
    await shot('app-deploying');
    await waitDeploy(page, 'finalize');
    await waitFor(async () => (await (await fetch(`http://127.0.0.1:${port}/`)).text()).includes('v2'), { what: 'v2 served' });
    await page.locator('#app-facts').getByText(WEB_V2).waitFor({ timeout: 15_000 });
    await shot('app');
    // Every tab, from its link, with its screenshot; the Logs tab follows the new container live.
    for (const label of TABS) {
      await tab(page, label);
      await allLabelled(page);
      expect(await page.locator('#app-facts').getByText(WEB_V2).count(), label).toBe(1);
      if (label === 'Logs') await page.getByRole('log', { name: 'Logs' }).getByText('svc-test web v2 starting').waitFor({ timeout: 20_000 });
      await shot(`app-${label.toLowerCase().replace(/\W+/g, '-')}`);
    }
  });

  it('masks a secret until Reveal, rolls back to v1, links a service', async () => {
    await tab(page, 'Environment');
    await byLabel(page, 'Key').fill('UI_SECRET');
    await byLabel(page, 'Value').fill('ui-secret-value-42');
    await byLabel(page, 'Secret').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Variable saved').waitFor();
    expect(await page.content()).not.toContain('ui-secret-value-42');
    await page.getByRole('button', { name: 'Reveal UI_SECRET' }).click();
    await page.locator('#env-value-UI_SECRET').getByText('ui-secret-value-42').waitFor();

    await page.getByRole('button', { name: 'Rollback' }).click();
    await page.getByRole('status').getByText(/^Rollback #\d+ (is queued|is running|succeeded)/).waitFor();
    await waitDeploy(page, 'finalize');
    // The banner gives way to the outcome (issue 18).
    await page.getByRole('status').getByText(/^Rollback #\d+ succeeded: serving v1/).waitFor({ timeout: 15_000 });
    await page.locator('#app-facts').getByText(WEB_V1).waitFor({ timeout: 15_000 });
    const history = page.locator('#deploy-history');
    await history.getByText('rollback').waitFor();

    await page.goto(t.url + '/services');
    await allLabelled(page);
    await byLabel(page, 'Name').fill('ui-cache');
    await byLabel(page, 'Type').selectOption('redis');
    await page.getByRole('button', { name: 'Create service' }).click();
    await page.getByRole('status').getByText(/being provisioned|created and running/).waitFor();
    await page.locator('#service-facts').getByText('active').waitFor({ timeout: 60_000 });
    await page.getByRole('status').getByText('Service created and running').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Show credentials' }).click();
    await page.locator('#credentials').getByText('password').waitFor();
    await shot('service');
    await page.goto(`${t.url}/apps/${appId}/services`);
    await byLabel(page, 'Service').selectOption({ label: 'ui-cache (redis)' });
    await byLabel(page, 'Alias').fill('CACHE');
    await page.getByRole('button', { name: 'Link', exact: true }).click();
    await page.getByRole('status').getByText('Service linked').waitFor();
    await page.getByText('CACHE_HOST').first().waitFor();
  });

  it('creates and downloads a backup, creates a token and uses it', async () => {
    await page.goto(t.url + '/backups');
    await page.getByRole('button', { name: 'Create backup' }).click();
    await page.getByRole('status').getByText('Backup created').waitFor();
    // The list refreshes itself while the archive is written.
    const link = page.getByRole('link', { name: /^Download/ }).first();
    await link.waitFor({ timeout: 60_000 });
    await shot('backups');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const file = join(SHOTS, 'backup.tar.gz');
    await download.saveAs(file);
    const bytes = readFileSync(file);
    expect(bytes.length).toBeGreaterThan(100);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);

    await page.goto(t.url + '/settings');
    await allLabelled(page);
    await byLabel(page, 'Token name').fill('ui-ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('#new-token').textContent())!.trim();
    await shot('settings');
    const res = await fetch(`${t.url}/api/apps`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }[]).map((a) => a.name)).toContain('ui-web');
    await page.reload();
    expect(await page.content()).not.toContain(token);
  });

  it('refuses a form post without its CSRF token, even from our own origin', async () => {
    const res = await page.request.post(`${t.url}/apps/new`, { form: { name: 'ui-forged', fallback_port: '18999' }, headers: { origin: t.url } });
    expect(res.status()).toBe(403);
    const apps = await page.request.get(`${t.url}/api/apps`);
    expect(((await apps.json()) as { name: string }[]).map((a) => a.name)).not.toContain('ui-forged');
  });

  it('screenshots the dashboard and the deploy page', async () => {
    await page.goto(t.url + '/');
    await page.getByRole('link', { name: 'ui-web' }).waitFor();
    await allLabelled(page);
    await shot('dashboard');
    await page.locator('#apps-table a[href^="/deploys/"]').first().click();
    await page.getByRole('log', { name: 'Events' }).getByText('finalize').waitFor();
    await shot('deploy');
  });

  it('works without JavaScript: login, create an app, save and reveal a secret, deploy', async () => {
    const plain = await launchBrowser({ javaScript: false });
    try {
      const p = await plain.context.newPage();
      await p.goto(t.url + '/');
      expect(new URL(p.url()).pathname).toBe('/login');
      await byLabel(p, 'Username').fill('admin');
      await byLabel(p, 'Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Log in' }).click();
      await p.getByRole('link', { name: 'New app' }).click();
      await byLabel(p, 'Name').fill('ui-plain');
      await byLabel(p, 'Image').fill(WEB_V1);
      await byLabel(p, 'Port').fill(String(await freePort()));
      await p.getByRole('button', { name: 'Create app' }).click();
      await p.getByRole('status').getByText('App created').waitFor();
      // Every tab is a page of its own, reached by its link.
      for (const label of TABS) {
        await tab(p, label);
        expect(await p.locator('#app-facts').count(), label).toBe(1);
      }
      await tab(p, 'Environment');
      const bad = p.getByRole('button', { name: 'Save', exact: true });
      await byLabel(p, 'Key').fill('1nvalid');
      await bad.click();
      await p.getByRole('alert').getByText(/^Key must start with a letter/).waitFor();
      await byLabel(p, 'Key').fill('PLAIN_SECRET');
      await byLabel(p, 'Value').fill('no-script-secret');
      await byLabel(p, 'Secret').check();
      await p.getByRole('button', { name: 'Save', exact: true }).click();
      await p.getByRole('status').getByText('Variable saved').waitFor();
      expect(await p.content()).not.toContain('no-script-secret');
      await p.getByRole('button', { name: 'Reveal PLAIN_SECRET' }).click();
      await p.locator('#env-value-PLAIN_SECRET').getByText('no-script-secret').waitFor();
      await p.getByRole('button', { name: 'Deploy', exact: true }).click();
      await p.getByRole('status').getByText(/^Deploy #\d+ (is queued|is running|succeeded)/).waitFor();
      await waitFor(
        async () => {
          await p.reload();
          return (await p.locator('#app-facts').textContent())?.includes('active');
        },
        { timeoutMs: 60_000, intervalMs: 1000, what: 'the no-script app to become active' },
      );
      await p.screenshot({ path: join(SHOTS, 'app-no-js.png'), fullPage: true });
    } finally {
      await plain.close();
    }
  });
});
