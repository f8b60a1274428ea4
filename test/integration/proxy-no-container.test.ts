// A route whose app has no container answers a readable 503 page at once (not after Caddy's 5 s
// try_duration); its first deploy turns it into the DNS route and the app serves, with the real daemon,
// engine and Caddy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon | undefined;

beforeAll(async () => {
  await ensureTestImages();
  t = await startTestDaemon('nocontainer');
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const get = async (port: number) => {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.text(), ms: Date.now() - started };
};

describe('a route with no container', () => {
  it('answers 503 with a readable page within 1 s, and serves the app once deployed', async () => {
    const port = await freePort();
    const app = await t!.api('POST', '/api/apps', { name: 'nc-web', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    // The listener appears with the proxy's next pass.
    const first = await waitFor(() => get(port).catch(() => undefined), { timeoutMs: 10_000, what: 'the port to answer' });
    expect(first.status).toBe(503);
    expect(first.body).toContain('no running container');
    const again = await get(port);
    expect(again.status).toBe(503);
    expect(again.ms).toBeLessThan(1000);

    const d = await t!.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
    expect(d.status).toBe(202);
    await waitFor(async () => (await t!.api('GET', `/api/deploys/${d.body.id}`)).body.status === 'success', { timeoutMs: 60_000, what: 'deploy' });
    // The route turned into the DNS one when the deploy began, so the app serves as soon as it succeeded.
    expect((await get(port)).status).toBe(200);
    expect((await t!.api('DELETE', `/api/apps/${app.body.id}`)).status).toBe(204);
  }, 120_000);
});
