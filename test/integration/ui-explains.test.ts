// The UI explains itself, in a real browser (issue 18, sections 3 and 4): required variables that block a
// deploy are listed before Deploy and an empty secret says "empty"; Rollback appears only with a target;
// a refusal names the field by its label; stderr lines are not painted as errors; the plain log page opens
// at its newest line; deleting a service asks first; a new token is shown once after a redirect and a
// reload neither repeats it nor makes another; token names are unique; "Link a service" lists unlinked services.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1, WEB_V2 } from '../support/images.js';
import { serviceImageEnv } from '../support/service-images.js';

let t: TestDaemon;
let browser: TestBrowser;
let page: Page;
let appId = 0;
let port = 0;

beforeAll(async () => {
  await ensureTestImages();
  t = await startTestDaemon('uiexplain', { ...serviceImageEnv(), SVC_DEPLOY_WATCH_SECONDS: '0' });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(t.url + '/login');
  await page.getByLabel('Username', { exact: true }).fill('admin');
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('link', { name: 'New app' }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the UI explains itself', () => {
  it('lists the required variables that block a deploy, shows an empty secret as empty, offers Rollback only with a target', async () => {
    port = await freePort();
    appId = (await t.api('POST', '/api/apps', { name: 'ex-web', image_ref: WEB_V1, internal_port: 3000, fallback_port: port })).body.id;
    await t.api('POST', `/api/apps/${appId}/env`, { key: 'API_KEY', value: '', is_secret: true, required: true });
    await page.goto(`${t.url}/apps/${appId}`);
    await page.locator('#deploy-blocked').getByText('API_KEY').waitFor();
    expect(await page.getByRole('button', { name: /^Rollback/ }).count()).toBe(0);
    await page.locator('#deploy-blocked').getByRole('link', { name: 'Environment' }).click();
    expect(await page.locator('#env-value-API_KEY').textContent()).toMatch(/^empty/);
    await page.goto(`${t.url}/apps/${appId}`);

    await t.api('POST', `/api/apps/${appId}/env`, { key: 'API_KEY', value: 'now-set' });
    await deployReaching(t, await requestImageDeploy(t, appId, WEB_V1), (d) => d.status === 'success', 'succeeded');
    await page.reload();
    expect(await page.locator('#deploy-blocked').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Rollback/ }).count()).toBe(0); // one image only: nothing to roll back to
  });

  it('names the field of a refusal by its label', async () => {
    await page.goto(`${t.url}/apps/${appId}/settings`);
    await page.getByLabel('Port', { exact: true }).fill('0');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('alert').getByText('Port must be between 1 and 65535').waitFor();
  });

  it('does not paint stderr lines as errors, and the log page opens at its newest line', async () => {
    await page.goto(`${t.url}/apps/${appId}/logs`);
    const logs = page.getByRole('log', { name: 'Logs' });
    await logs.getByText('svc-test web v1 starting').waitFor({ timeout: 20_000 });
    // busybox httpd -v logs each request on stderr.
    for (let i = 0; i < 120; i++) await fetch(`http://127.0.0.1:${port}/?n=${i}`);
    const stderrLine = logs.locator('.stderr').first();
    await stderrLine.waitFor({ timeout: 20_000 });
    const colour = (l: ReturnType<Page['locator']>) => l.evaluate((e) => getComputedStyle(e).color);
    const stdoutLine = logs.getByText('svc-test web v1 starting');
    expect(await colour(stderrLine)).toBe(await colour(stdoutLine));

    await page.goto(`${t.url}/apps/${appId}/logs`);
    const newest = page.locator('#newest');
    await newest.waitFor({ state: 'attached' });
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    const at = await newest.evaluate((e) => ({ bottom: e.getBoundingClientRect().bottom, top: e.getBoundingClientRect().top, inner: window.innerHeight, y: window.scrollY, h: document.documentElement.scrollHeight }));
    expect(at.top, JSON.stringify(at)).toBeLessThan(at.inner); // the newest line is on screen
  });

  it('"Link a service" offers only services not linked yet', async () => {
    const linked = (await t.api('POST', '/api/services', { name: 'ex-linked', type: 'redis' })).body;
    await t.api('POST', '/api/services', { name: 'ex-free', type: 'redis' });
    expect((await t.api('POST', `/api/apps/${appId}/services`, { service_id: linked.id })).status).toBe(201);
    await page.goto(`${t.url}/apps/${appId}/services`);
    const options = await page.getByLabel('Service', { exact: true }).locator('option').allTextContents();
    expect(options).toEqual(['ex-free (redis)']);
  });

  it('asks before deleting a service', async () => {
    const svc = (await t.api('POST', '/api/services', { name: 'ex-cache', type: 'redis' })).body;
    await page.goto(`${t.url}/services/${svc.id}`);
    await page.getByRole('button', { name: 'Delete service' }).click();
    await page.getByText('cannot be undone').waitFor();
    expect((await t.api('GET', `/api/services/${svc.id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete service' }).click();
    await page.getByRole('status').getByText(/deleted/i).waitFor();
  });

  it('shows a new token once after a redirect; a reload shows it no more and makes no other; names are unique', async () => {
    await page.goto(`${t.url}/settings`);
    await page.getByLabel('Token name', { exact: true }).fill('ex-ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('#new-token').textContent())!.trim();
    expect(token).toMatch(/^svc_/);
    expect(new URL(page.url()).pathname).toBe('/settings');
    await page.reload();
    expect(await page.content()).not.toContain(token);
    await page.getByRole('status').getByText('shown once').waitFor();
    const names = ((await t.api('GET', '/api/tokens')).body as { name: string }[]).map((x) => x.name);
    expect(names.filter((n) => n === 'ex-ci')).toHaveLength(1);
    await page.getByLabel('Token name', { exact: true }).fill('ex-ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('alert').getByText('a token named ex-ci already exists').waitFor();
  });

  it('offers Rollback once an earlier image could be rolled back to', async () => {
    await deployReaching(t, await requestImageDeploy(t, appId, WEB_V2), (d) => d.status === 'success', 'succeeded');
    await page.goto(`${t.url}/apps/${appId}`);
    await page.getByRole('button', { name: `Rollback to ${WEB_V1}` }).waitFor();
  });
});
