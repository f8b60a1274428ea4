// DESIGN.md rules 2 and 7 for the proxy reconciler against the real data plane (a real Caddy shared in
// external mode, a real dnsmasq): once converged, another pass loads nothing into Caddy and writes no
// DNS file. Every admin request is counted; the hosts files are compared by content and mtime.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createSharedCaddyProxy } from '../../src/proxy/caddy-shared.js';
import { dnsmasqPaths } from '../../src/dns/dnsmasq.js';
import { writeHostsDir } from '../../src/dns/hosts.js';
import { createDnsSupervisor } from '../../src/dns/supervise.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { createDnsSync } from '../../src/reconcilers/proxy/dns-sync.js';
import { createProxyReconciler, PROXY_PROBE_MS } from '../../src/reconcilers/proxy/reconciler.js';
import { observeApp } from '../../src/observed/apps.js';
import { freePort, startCaddy, type TestCaddy } from '../support/caddy.js';
import { memoryDb, recordingEnqueue } from '../support/db.js';
import { waitFor } from '../support/wait.js';
import { createApp } from '../support/commands.js';
import { adminFetch, adminFetchAsFetch } from '../support/admin-fetch.js';

let caddy: TestCaddy | undefined;
let dir: string | undefined;

afterAll(async () => {
  if (dir) {
    await stopHelpersOf(dir);
    await rm(dir, { recursive: true, force: true });
  }
  await caddy?.stop();
});

describe('proxy reconciler steady state (real Caddy, real dnsmasq)', () => {
  it('reconciling again loads nothing and writes nothing', async () => {
    caddy = await startCaddy();
    dir = await mkdtemp(join(tmpdir(), 'svc-test-steady-'));
    const { hostsDir } = dnsmasqPaths(dir);
    const dnsPort = await freePort();
    const requests: string[] = [];
    const counting: typeof fetch = (input, init) => (requests.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`), adminFetchAsFetch(input, init));
    const proxy = createSharedCaddyProxy({ adminUrl: caddy.adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort, instance: 'steady', log: silentLogger, fetch: counting });
    const db = memoryDb();
    const enqueue = recordingEnqueue();
    const web = createApp(db, enqueue, { name: 'web', fallbackPort: await freePort() }, 'rest');
    createApp(db, enqueue, { name: 'site', accessMode: 'domain', domain: 'site.test' }, 'rest');
    observeApp(db, web.id, { liveAddress: '10.9.0.2' });
    const rec = createProxyReconciler({
      db,
      proxy,
      dns: createDnsSync(db, (records) => writeHostsDir(hostsDir, records)),
      ensureDnsResponder: createDnsSupervisor({ dataDir: dir, port: dnsPort, log: silentLogger }).ensure,
      log: silentLogger,
    });

    // Converge: passes come back soon while the responder starts, then at the probe interval.
    await waitFor(async () => (await rec.reconcile('main')).requeueAfterMs === PROXY_PROBE_MS, { timeoutMs: 10_000, what: 'converged' });
    expect(requests.filter((r) => !r.startsWith('GET')).length).toBeGreaterThan(0);
    const files = async () => Promise.all((await readdir(hostsDir)).map(async (f) => [f, (await stat(join(hostsDir, f))).mtimeMs]));
    const config = async () => (await adminFetch(`${caddy!.adminUrl}/config/`)).text();
    const before = { files: await files(), config: await config() };
    requests.length = 0;

    expect(await rec.reconcile('main')).toEqual({ requeueAfterMs: PROXY_PROBE_MS });
    expect(requests.filter((r) => !r.startsWith('GET'))).toEqual([]);
    expect({ files: await files(), config: await config() }).toEqual(before);
  });
});
