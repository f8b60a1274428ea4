// Teams in a real browser (Debian's chromium): setting up the second factor on /account (the QR code is a
// server-rendered SVG), logging in with a code, with a recovery code once and not twice, and an invitation
// link that works once. The server is the real app on a loopback port over a `:memory:` database (no
// engine needed); its clock is the test's, so the test computes the codes an authenticator app would show.
import { serve, type ServerType } from '@hono/node-server';
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { createTestApi, SEEDED_PASSWORD, type TestApi } from '../support/api.js';

let t: TestApi;
let server: ServerType;
let url = '';
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  t = createTestApi();
  await t.login('olivia');
  await new Promise<void>((resolve) => {
    server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
      url = `http://127.0.0.1:${info.port}`;
      resolve();
    });
  });
  browser = await launchBrowser();
  page = await browser.context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const byLabel = (p: Page, label: string) => p.getByLabel(label, { exact: true });
const codeNow = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: t.clock.now().getTime() });

async function logIn(p: Page, code?: string) {
  await p.goto(url + '/login');
  await byLabel(p, 'Username').fill('olivia');
  await byLabel(p, 'Password').fill(SEEDED_PASSWORD);
  if (code !== undefined) await byLabel(p, 'Authentication code').fill(code);
  await p.getByRole('button', { name: 'Log in' }).click();
}

async function logOut(p: Page) {
  await p.getByRole('button', { name: 'Log out' }).click();
  await p.getByRole('status').getByText('You are logged out').waitFor();
}

describe('teams in a browser', () => {
  let secret = '';
  let recovery: string[] = [];

  it('sets up two-factor authentication from the QR code page', async () => {
    await logIn(page);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const qr = page.locator('img#totp-qr');
    await qr.waitFor();
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    secret = (await page.locator('#totp-secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await byLabel(page, 'Code').fill('000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').getByText('wrong or expired code').waitFor();
    await byLabel(page, 'Code').fill(codeNow(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    recovery = await page.locator('#recovery-codes li').allTextContents();
    expect(recovery).toHaveLength(10);
    await logOut(page);
  });

  it('logs in with a code, and refuses the password alone', async () => {
    await logIn(page);
    await page.getByRole('alert').getByText('enter the code of your authenticator app').waitFor();
    t.clock.advance(30_000); // a fresh code: the one used to turn it on is spent
    await logIn(page, codeNow(secret));
    await page.getByRole('link', { name: 'Account' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    await logOut(page);
  });

  it('a recovery code works once', async () => {
    await logIn(page, recovery[0]);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('9 recovery codes left').waitFor();
    await logOut(page);
    await logIn(page, recovery[0]);
    await page.getByRole('alert').getByText('wrong authentication code').waitFor();
  });

  it('an invitation link works once', async () => {
    t.clock.advance(30_000);
    await logIn(page, codeNow(secret));
    await page.goto(url + '/users');
    await byLabel(page, 'Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = (await page.locator('#invite-link').textContent())!.trim();
    expect(link).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);
    const guest = await browser.context.browser()!.newContext().catch(() => undefined);
    // A second, cookie-less page: a persistent context has one cookie jar, so clear it for the guest.
    const other = guest ? await guest.newPage() : page;
    if (!guest) await browser.context.clearCookies();
    const invite = new URL(link).pathname;
    await other.goto(url + invite);
    await other.getByText('You are invited as').waitFor();
    await byLabel(other, 'Username').fill('vic');
    await byLabel(other, 'Password').fill('viewer password 1');
    await other.getByRole('button', { name: 'Create account' }).click();
    await other.getByRole('link', { name: 'Users' }).waitFor();
    await other.goto(url + invite);
    await other.getByText('unknown, already used or expired').waitFor();
    await guest?.close();
  });
});
