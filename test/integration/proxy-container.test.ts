// Container mode for real: the proxy container from a locally imported Caddy image, on the host
// network, driven by the admin adapter; it resumes its routes after a stop/start with no apply.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { ensureProxyContainer } from '../../src/proxy/container.js';
import { createCaddyProxy } from '../../src/proxy/caddy.js';
import { appDnsName } from '../../src/proxy/proxy.js';
import { ensureDnsResponder } from '../../src/dns/supervise.js';
import { dnsmasqPaths } from '../../src/dns/dnsmasq.js';
import { writeHostsDir } from '../../src/dns/hosts.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { silentLogger } from '../../src/log.js';
import { ensureCaddyImage } from '../support/caddy-image.js';
import { freePort } from '../support/caddy.js';
import { waitFor } from '../support/wait.js';

const INSTANCE = `test-proxy-container-${process.pid}`;
const NAME = `test-proxy-container-caddy-${process.pid}`;
const runtime = createDockerRuntime({ log: silentLogger });
let dataDir: string;
let upstream: Server;

beforeAll(async () => {
  await ensureCaddyImage();
  dataDir = await mkdtemp(join(tmpdir(), 'svc-test-proxy-container-'));
});

afterAll(async () => {
  // Only what this file created: the container carries our instance label.
  for (const c of await runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE })) await runtime.remove(c.id);
  if (dataDir) await stopHelpersOf(dataDir);
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('proxy container', () => {
  it('runs Caddy on the host network, serves a route, and resumes it after a restart', async () => {
    const adminUrl = `http://127.0.0.1:${await freePort()}`;
    const dnsPort = await freePort();
    const upPort = await freePort();
    const listenPort = await freePort();
    upstream = createServer((_req, res) => res.end('from-host'));
    await new Promise<void>((r) => upstream.listen(upPort, '127.0.0.1', () => r()));
    await writeHostsDir(dnsmasqPaths(dataDir).hostsDir, { [appDnsName('web')]: '127.0.0.1' });
    await ensureDnsResponder({ dataDir, port: dnsPort, log: silentLogger });

    const proxy = createCaddyProxy({ adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort, log: silentLogger });
    const o = { runtime, image: 'svc-test/caddy:2', adminUrl, dataDir, instance: INSTANCE, name: NAME, log: silentLogger, waitReady: proxy.waitReady };
    expect(await ensureProxyContainer(o)).toEqual({ action: 'create', changed: true });
    const info = await runtime.inspect(NAME);
    expect(info?.labels).toMatchObject({ 'svc.managed': 'true', 'svc.instance': INSTANCE, 'svc.role': 'proxy' });

    const routes = [{ app: 'web', mode: 'port' as const, port: listenPort, upstream: { kind: 'dns' as const, name: appDnsName('web'), port: upPort } }];
    await proxy.apply(routes);
    const get = async () => (await fetch(`http://127.0.0.1:${listenPort}/`, { signal: AbortSignal.timeout(5000) })).text();
    expect(await waitFor(async () => (await get()) === 'from-host', { timeoutMs: 10_000, what: 'route through the container' })).toBe(true);
    expect(await ensureProxyContainer(o)).toEqual({ action: 'none', changed: false });

    // Stopped (crash, engine restart): started again, it serves the autosaved routes before any apply.
    await runtime.stop(NAME, 5);
    expect(await ensureProxyContainer(o)).toEqual({ action: 'start', changed: true });
    expect(await waitFor(async () => (await get()) === 'from-host', { timeoutMs: 10_000, what: 'resumed route' })).toBe(true);
  });
});
