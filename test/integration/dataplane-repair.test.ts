// The data plane repairs itself, through the whole daemon (real engine, host Caddy, dnsmasq): Caddy
// emptied and the responder killed are each served again within 5 s with no API call; and a new svc on a
// fresh data directory takes over the DNS port from the responder of an earlier svc whose directory was
// deleted, and routes its own apps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { dnsmasqPaths, hostsDirArg } from '../../src/dns/dnsmasq.js';
import { dnsResponderPid } from '../../src/dns/supervise.js';
import { pidsWithArg, processArgs } from '../../src/proxy/detached.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';
import { adminFetch } from '../support/admin-fetch.js';

const daemons: TestDaemon[] = [];
beforeAll(async () => {
  await ensureTestImages(createDockerRuntime({ log: silentLogger }));
});
afterAll(async () => {
  for (const d of daemons) await d.close();
});

async function start(name: string, env: Record<string, string> = {}) {
  const t = await startTestDaemon(name, env);
  daemons.push(t);
  return t;
}

/** Creates a port-mode app and deploys v1; resolves its listener port once the deploy succeeded. */
async function deployedApp(t: TestDaemon, name: string): Promise<number> {
  const port = await freePort();
  const app = await t.api('POST', '/api/apps', { name, internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  const d = await t.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
  expect(d.status, JSON.stringify(d.body)).toBe(202);
  await waitFor(async () => (await t.api('GET', `/api/deploys/${d.body.id}`)).body.status === 'success', { timeoutMs: 60_000, what: 'deploy' });
  return port;
}

/** One GET through Caddy that must answer 200 quickly (a Caddy waiting on a dead resolver does not). */
const served = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
};

describe('data plane self-repair', () => {
  let t: TestDaemon;
  let port: number;

  it('Caddy restarted with an empty config serves the apps again within 5 s, with no API call', async () => {
    t = await start('dprep');
    port = await deployedApp(t, 'dprep-web');
    await waitFor(() => served(port), { timeoutMs: 10_000, what: 'app served' });

    // What a Caddy restarted without its config has: only the admin listener.
    const listen = new URL(t.caddy.adminUrl).host;
    const res = await adminFetch(`${t.caddy.adminUrl}/load`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ admin: { listen } }) });
    expect(res.status).toBe(200);
    await waitFor(async () => !(await served(port).catch(() => false)), { timeoutMs: 2000, intervalMs: 10, what: 'the route to be gone' });
    await waitFor(() => served(port).catch(() => false), { timeoutMs: 5000, intervalMs: 50, what: 'served again within 5 s' });
  });

  it('the responder killed with its guard is running and answering again within 5 s, with no API call', async () => {
    const { hostsDir } = dnsmasqPaths(t.dataDir);
    const before = dnsResponderPid(t.dataDir);
    expect(before).toBeGreaterThan(1);
    const pids = pidsWithArg(hostsDirArg(hostsDir));
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await waitFor(() => pids.every((p) => processArgs(p) === undefined), { timeoutMs: 2000, what: 'responder and guard gone' });
    await waitFor(() => dnsResponderPid(t.dataDir), { timeoutMs: 5000, intervalMs: 20, what: 'responder started again within 5 s' });
    await waitFor(() => served(port).catch(() => false), { timeoutMs: 2000, what: 'served' });
  });
});

describe('a fresh svc where svc ran before', () => {
  it('takes over the DNS port from the responder of a stopped svc whose data directory was deleted, and routes its apps', async () => {
    const dnsPort = String(await freePort());
    const first = await start('dpold', { SVC_DNS_PORT: dnsPort });
    const oldPort = await deployedApp(first, 'dpold-web');
    await waitFor(() => served(oldPort), { timeoutMs: 10_000, what: 'first instance serves' });
    const oldResponder = dnsResponderPid(first.dataDir)!;

    // Stop svc (its responder keeps running, by design) and delete its data directory.
    await first.daemon.stop();
    await rm(first.dataDir, { recursive: true, force: true });

    const second = await start('dpnew', { SVC_DNS_PORT: dnsPort });
    const newPort = await deployedApp(second, 'dpnew-web');
    await waitFor(() => served(newPort).catch(() => false), { timeoutMs: 10_000, what: 'the new instance serves its app' });
    expect(processArgs(oldResponder)).toBeUndefined();
    expect(dnsResponderPid(second.dataDir)).toBeGreaterThan(1);
  });
});
