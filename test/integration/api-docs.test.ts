// The API reference page (issue 34) in a real browser: /docs/api renders the daemon's own OpenAPI document
// with the Scalar bundle the daemon serves, under the page's CSP, without asking any other host for
// anything; without JavaScript it still links the document. The app is the real hono server on :memory:.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type ServerType } from '@hono/node-server';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/caddy.js';
import { createTestApi } from '../support/api.js';

let server: ServerType;
let url = '';
let browser: TestBrowser | undefined;

beforeAll(async () => {
  const api = createTestApi();
  const port = await freePort();
  server = serve({ fetch: api.app.fetch, port, hostname: '127.0.0.1' });
  url = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('/docs/api', () => {
  it('renders every tag and an operation from /api/openapi.json, loading nothing from another host', async () => {
    browser = await launchBrowser();
    const page = await browser.context.newPage();
    const foreign: string[] = [];
    const refused: string[] = [];
    // What reached another host: Scalar's CSS names its fonts' CDN, which the page's CSP refuses (a refused
    // request never finishes).
    page.on('requestfinished', (r) => {
      if (!r.url().startsWith(url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url());
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text()) && !/font/i.test(m.text())) refused.push(m.text());
    });
    await page.goto(`${url}/docs/api`);
    await page.getByText('svc API', { exact: false }).first().waitFor({ timeout: 60_000 });
    await page.screenshot({ path: '/tmp/svc-api-docs.png' });
    await page.getByText('Apps', { exact: true }).first().click();
    await page.getByText('List apps, newest first').first().waitFor({ timeout: 60_000 });
    for (const tag of ['Apps', 'Deploys', 'Environment', 'Services', 'Backups']) {
      expect(await page.getByText(tag, { exact: true }).count(), tag).toBeGreaterThan(0);
    }
    expect(await page.locator('#api-reference-loading').count()).toBe(0);
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await browser.close();
    browser = undefined;
  });

  it('without JavaScript, links the document itself', async () => {
    browser = await launchBrowser({ javaScript: false });
    const page = await browser.context.newPage();
    await page.goto(`${url}/docs/api`);
    const link = page.getByRole('link', { name: '/api/openapi.json' });
    expect(await link.getAttribute('href')).toBe('/api/openapi.json');
    const res = await page.goto(`${url}/api/openapi.json`);
    expect(res?.status()).toBe(200);
    expect(JSON.parse((await res?.text()) ?? '{}').openapi).toBe('3.1.0');
  });
});
