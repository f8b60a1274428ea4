// Status that tells the truth, in a real browser (issue 18 section 2): after a deploy that fails, the app
// page's "Deploy queued" banner gives way to the outcome by itself (no reload by the user), and the app
// page and the dashboard say beside `error` that the app still serves v1 and why the last deploy failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../support/images.js';

let t: TestDaemon;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  await ensureTestImages();
  t = await startTestDaemon('uistatus', { SVC_DEPLOY_WATCH_SECONDS: '0' });
  browser = await launchBrowser();
  page = await browser.context.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

// An image on a registry address nothing answers (loopback only): the pull fails at once.
const MISSING = '127.0.0.1:1/svc-test/web:nope';
const REASON = `pull of ${MISSING} failed`;

describe('status in the browser', () => {
  it('a failed deploy of a serving app: the banner turns into the outcome, and every status says "serving v1 · last deploy failed: <reason>"', async () => {
    const app = (await t.api('POST', '/api/apps', { name: 'st-web', internal_port: WEB_PORT, access_mode: 'port', fallback_port: await freePort(), image_ref: WEB_V1 })).body;
    await deployReaching(t, await requestImageDeploy(t, app.id, WEB_V1), (d) => d.status === 'success', 'succeeded');

    await page.goto(`${t.url}/login`);
    await page.getByLabel('Username', { exact: true }).fill('admin');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('link', { name: 'New app' }).waitFor();

    await page.goto(`${t.url}/apps/${app.id}`);
    expect(await page.locator('#app-facts [data-status-line]').textContent()).toBe('serving v1');
    await page.getByLabel('Image', { exact: true }).fill(MISSING);
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    // The banner first says queued or running, then, with no action of the user, what became of it.
    const banner = page.locator('#flash');
    await banner.getByText(/^Deploy #\d+ (is queued|is running|failed)/).waitFor();
    await banner.getByText(`failed: ${REASON}`, { exact: false }).waitFor({ timeout: 20_000 });
    expect(await banner.getAttribute('class')).toContain('error');
    const line = new RegExp(`^serving v1 · last deploy failed: ${REASON.replace(/[.:/]/g, '\\$&')}`);
    await page.locator('#app-facts [data-status-line]').getByText(line).waitFor({ timeout: 20_000 });
    expect(await page.locator('#app-facts .badge').first().textContent()).toBe('error');

    await page.goto(`${t.url}/`);
    const row = page.getByRole('row').filter({ hasText: 'st-web' });
    expect(await row.locator('[data-status-line]').textContent()).toMatch(line);
    expect((await t.api('GET', `/api/apps/${app.id}`)).body).toMatchObject({ status: 'error', serving: true, live_image: WEB_V1, status_reason: expect.stringContaining(REASON) });
    expect((await t.api('DELETE', `/api/apps/${app.id}`)).status).toBe(204);
  }, 90_000);
});
