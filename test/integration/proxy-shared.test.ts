// SVC_PROXY_MODE=external with a Caddy svc shares (API.md "Configuration", end): svc owns only the servers
// named after its instance, so an operator's own site keeps serving and two instances sharing one Caddy
// never remove each other's routes. Two real daemons, one real Caddy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';
import { adminFetch } from '../support/admin-fetch.js';

let a: TestDaemon | undefined;
let b: TestDaemon | undefined;

beforeAll(async () => {
  a = await startTestDaemon('shared-a');
  b = await startTestDaemon('shared-b', { SVC_PROXY_ADMIN_URL: a.caddy.adminUrl });
});

afterAll(async () => {
  await b?.close();
  await a?.close();
});

const body = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  return res ? await res.text() : undefined;
};

/** The operator's own server, added through the admin API at the shallowest level that exists. */
async function addOperatorSite(adminUrl: string, port: number) {
  const server = { listen: [`:${port}`], routes: [{ handle: [{ handler: 'static_response', body: 'operator site' }] }], automatic_https: { disable: true } };
  const config = (await (await adminFetch(`${adminUrl}/config/`)).json()) as { apps?: { http?: { servers?: object } } } | null;
  const [path, value] = config?.apps?.http?.servers
    ? ['/config/apps/http/servers/operator', server]
    : config?.apps?.http
      ? ['/config/apps/http/servers', { operator: server }]
      : config?.apps
        ? ['/config/apps/http', { servers: { operator: server } }]
        : ['/config/apps', { http: { servers: { operator: server } } }];
  const res = await adminFetch(`${adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
  expect(res.status, await res.text()).toBe(200);
}

describe('a shared Caddy (external mode)', () => {
  it("keeps the operator's site and the other instance's routes; each instance writes only its own servers", async () => {
    const opPort = await freePort();
    await addOperatorSite(a!.caddy.adminUrl, opPort);
    await waitFor(async () => (await body(opPort)) === 'operator site', { what: 'operator site' });

    const routeTo = async (t: TestDaemon, name: string) => {
      const port = await freePort();
      const res = await t.api('POST', '/api/apps', { name, app_type: 'external_service', source: `http://127.0.0.1:${opPort}`, access_mode: 'port', fallback_port: port });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { id: res.body.id as number, port };
    };
    const appA = await routeTo(a!, 'via-a');
    const appB = await routeTo(b!, 'via-b');
    await waitFor(async () => (await body(appA.port)) === 'operator site' && (await body(appB.port)) === 'operator site', { timeoutMs: 15_000, what: 'both instances route' });
    expect(await body(opPort)).toBe('operator site');

    const servers = async () => Object.keys(((await (await adminFetch(`${a!.caddy.adminUrl}/config/apps/http/servers`)).json()) ?? {}) as object).sort();
    expect(await servers()).toEqual(['operator', `${a!.instance}-port-${appA.port}`, `${b!.instance}-port-${appB.port}`].sort());

    // A's app deleted: only A's server goes.
    expect((await a!.api('DELETE', `/api/apps/${appA.id}`)).status).toBeLessThan(300);
    await waitFor(async () => !(await servers()).includes(`${a!.instance}-port-${appA.port}`), { timeoutMs: 15_000, what: "A's server removed" });
    expect(await servers()).toEqual(['operator', `${b!.instance}-port-${appB.port}`].sort());
    expect(await body(opPort)).toBe('operator site');
    expect(await body(appB.port)).toBe('operator site');
  });
});
