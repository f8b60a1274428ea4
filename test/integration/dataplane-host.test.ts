// SVC_PROXY_MODE=auto on a host that cannot pull the proxy image: svc runs the host's Caddy itself,
// detached, serves apps through it, and the apps keep being served while the daemon is stopped; a Caddy
// restarted empty gets its routes again within seconds, not at the proxy pass's 30 s safety look.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { hostCaddyPid } from '../../src/proxy/host.js';
import { processArgs } from '../../src/proxy/detached.js';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { caddyBin, freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon | undefined;
beforeAll(async () => {
  await ensureTestImages(createDockerRuntime({ log: silentLogger }));
});
afterAll(async () => {
  await t?.close(); // stops the host Caddy and its guard with the other helpers of the data dir
});

/** The admin API requests Caddy logged, oldest first (`/load`, `/id/<fingerprint>/http_port`, ...). */
const adminUris = (dataDir: string) =>
  readFileSync(join(dataDir, 'proxy', 'caddy.log'), 'utf8')
    .split('\n')
    .flatMap((l) => {
      try {
        const j = JSON.parse(l) as { logger?: string; uri?: string };
        return j.logger === 'admin.api' && j.uri ? [j.uri] : [];
      } catch {
        return [];
      }
    });

const served = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
};

describe('proxy mode auto without a pullable image', () => {
  it('falls back to the host Caddy, serves apps, and keeps serving while the daemon is stopped', async () => {
    const adminUrl = `http://127.0.0.1:${await freePort()}`;
    t = await startTestDaemon('dphost', {
      SVC_PROXY_MODE: 'auto',
      SVC_PROXY_IMAGE: 'svc-test/no-such-proxy:0',
      SVC_PROXY_ADMIN_URL: adminUrl,
    });
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'dphost-web', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const d = await t.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
    expect(d.status).toBe(202);
    await waitFor(async () => (await t!.api('GET', `/api/deploys/${d.body.id}`)).body.status === 'success', { timeoutMs: 60_000, what: 'deploy' });
    await waitFor(() => served(port).catch(() => false), { timeoutMs: 10_000, what: 'served through the host Caddy' });

    // It is the host's Caddy of this data directory, with its state under SVC_DATA_DIR.
    const pid = hostCaddyPid(t.dataDir);
    expect(pid).toBeGreaterThan(1);
    expect(processArgs(pid!)).toEqual([caddyBin(), 'run', '--resume', '--config', join(t.dataDir, 'proxy', 'config', 'bootstrap.json'), '--pidfile', join(t.dataDir, 'proxy', 'caddy.pid')]);
    const config = JSON.parse(readFileSync(join(t.dataDir, 'proxy', 'config', 'caddy', 'autosave.json'), 'utf8'));
    expect(Object.keys(config.apps.http.servers)).toEqual([`port-${port}`]);

    await t.daemon.stop();
    for (let i = 0; i < 20; i++) expect(await served(port)).toBe(true);
    expect(hostCaddyPid(t.dataDir)).toBe(pid);

    // A restarted daemon adopts the running host Caddy (auto keeps what runs) and starts no second one.
    const before = adminUris(t.dataDir).length;
    await t.restart();
    await waitFor(() => served(port).catch(() => false), { timeoutMs: 10_000, what: 'served after the restart' });
    expect(hostCaddyPid(t.dataDir)).toBe(pid);

    // Steady: the restarted daemon's proxy pass asked Caddy (GET /id/...) after its last load, and trusts
    // that answer from now on while the same Caddy process runs (src/proxy/trust.ts: else every 30 s).
    await waitFor(
      () => {
        const uris = adminUris(t!.dataDir);
        const lastAsk = uris.map((u) => u.startsWith('/id/')).lastIndexOf(true);
        return lastAsk >= before && lastAsk > uris.lastIndexOf('/load');
      },
      { timeoutMs: 10_000, what: 'the proxy pass steady' },
    );
    // Caddy killed with its autosave gone: its guard starts it again with the bootstrap config only; the
    // new pid makes the pass ask at once and load the routes again.
    rmSync(join(t.dataDir, 'proxy', 'config', 'caddy', 'autosave.json'));
    process.kill(pid!, 'SIGKILL');
    await waitFor(() => (hostCaddyPid(t!.dataDir) ?? pid) !== pid, { timeoutMs: 5000, what: 'Caddy started again by its guard' });
    await waitFor(() => served(port).catch(() => false), { timeoutMs: 5000, intervalMs: 50, what: 'the routes loaded again within 5 s' });
  });
});
