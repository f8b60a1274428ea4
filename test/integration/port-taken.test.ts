// One app on a taken port never blocks the other routes (issue 18 section 1), with the real daemon,
// engine and Caddy (2.6.2, shared/external mode as every integration daemon). A port another process
// holds is refused at create (409 port_in_use). A port taken later (Caddy lost it, then someone took it)
// leaves that one listener out: the app shows the proxy's error as `route_error`, other apps are created,
// deploy, switch and serve meanwhile, and once the port is free the route comes back by itself. Caddy
// never holds more than one listening socket per port (each rejected load used to leak one), and none
// after the app is deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';
import { listeningSockets } from '../../src/proxy/listening.js';
import { adminFetch } from '../support/admin-fetch.js';

let t: TestDaemon | undefined;
const holders: Server[] = [];

beforeAll(async () => {
  await ensureTestImages();
  t = await startTestDaemon('porttaken');
}, 120_000);
afterAll(async () => {
  await Promise.all(holders.map((h) => new Promise((r) => h.close(r))));
  await t?.close();
});

/** A listener of the test on `port`, on all IPv4 addresses (Caddy's `:port` needs them); rejects when taken. */
const hold = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer((c) => c.destroy());
    s.once('error', reject);
    s.listen(port, '0.0.0.0', () => (holders.push(s), resolve(s)));
  });
const release = (s: Server) => new Promise((r) => s.close(r));

const get = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, text: await res.text() };
};
const serves = (port: number, needle: string, status = 200) =>
  waitFor(async () => {
    const r = await get(port).catch(() => undefined);
    return r?.status === status && r.text.includes(needle);
  }, { timeoutMs: 15_000, what: `port ${port} to answer ${status} ${needle}` });
const sockets = (port: number) => listeningSockets()?.get(port) ?? 0;

describe('an app on a taken port', () => {
  it('is refused at create with 409 port_in_use naming the port; nothing is created', async () => {
    const port = await freePort();
    await hold(port);
    const res = await t!.api('POST', '/api/apps', { name: 'pt-refused', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'port_in_use', details: { port, field: 'fallback_port' } });
    expect(res.body.error).toContain(`port ${port}`);
    expect(((await t!.api('GET', '/api/apps')).body as { name: string }[]).map((a) => a.name)).not.toContain('pt-refused');
  });

  it('taken later: its listener is left out with route_error, others deploy, switch and serve, and the route comes back once the port is free', async () => {
    const badPort = await freePort();
    const bad = (await t!.api('POST', '/api/apps', { name: 'pt-bad', internal_port: WEB_PORT, access_mode: 'port', fallback_port: badPort })).body;
    await serves(badPort, 'no running container', 503);

    // Caddy loses its config (as after a restart with an emptied one) and another process takes the port
    // before svc reloads: retried when svc's reload won the race (bounded).
    let holder: Server | undefined;
    for (let i = 0; i < 10 && !holder; i++) {
      const emptied = await adminFetch(`${t!.caddy.adminUrl}/load`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ admin: { listen: new URL(t!.caddy.adminUrl).host } }),
      });
      expect(emptied.status).toBe(200);
      holder = await hold(badPort).catch(() => undefined);
    }
    expect(holder, 'the test could take the port').toBeDefined();

    const routeError = await waitFor(async () => (await t!.api('GET', `/api/apps/${bad.id}`)).body.route_error as string | null, {
      timeoutMs: 10_000, what: 'route_error of the app on the taken port',
    });
    expect(routeError).toContain(`port ${badPort} is already in use`);

    // Meanwhile: a new app is created, deployed, switched to v2, and serves.
    const goodPort = await freePort();
    const good = (await t!.api('POST', '/api/apps', { name: 'pt-good', internal_port: WEB_PORT, access_mode: 'port', fallback_port: goodPort })).body;
    await deployReaching(t!, await requestImageDeploy(t!, good.id, WEB_V1), (d) => d.status === 'success', 'succeeded');
    await serves(goodPort, 'v1');
    await deployReaching(t!, await requestImageDeploy(t!, good.id, WEB_V2), (d) => d.status === 'success', 'succeeded');
    await serves(goodPort, 'v2');
    expect((await t!.api('GET', `/api/apps/${good.id}`)).body).toMatchObject({ route_error: null, serving: true, live_image: WEB_V2, status: 'active' });
    expect((await get(badPort).catch(() => undefined))?.text ?? '').not.toContain('no running container'); // the test's listener, not Caddy

    // Freed: the route comes back by itself (backoff, under ~10 s) and the error clears.
    await release(holder!);
    await serves(badPort, 'no running container', 503);
    await waitFor(async () => (await t!.api('GET', `/api/apps/${bad.id}`)).body.route_error === null, { timeoutMs: 10_000, what: 'route_error to clear' });
    // Nothing leaked in Caddy: one listening socket per port.
    expect([sockets(badPort), sockets(goodPort)]).toEqual([1, 1]);

    expect((await t!.api('DELETE', `/api/apps/${bad.id}`)).status).toBe(204);
    await waitFor(() => sockets(badPort) === 0, { timeoutMs: 10_000, what: `Caddy to close port ${badPort}` });
    expect(sockets(goodPort)).toBe(1);
    expect((await t!.api('DELETE', `/api/apps/${good.id}`)).status).toBe(204);
  }, 90_000);
});
