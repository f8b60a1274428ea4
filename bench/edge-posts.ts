// Edge benchmark (issue 19): N deploys of a 4-replica app on the test Swarm (test/support/swarm-cluster.ts)
// under keep-alive GET/POST clients, every request through the host's Caddy and the edge relay; prints the
// failed requests, both Caddys' error and warning lines counted by message, the first failures' times and the
// relay's config loads, so a failure can be placed against a reload
// (docs/decisions/0038-swarm-edge-relay.md). Shorter than bench:cluster part 2, for trying a proxy setting.
//
//   npm run bench:edge-posts -- [--deploys 4] [--clients 16]
//
// Needs root (network namespaces). Traffic goes only to loopback; every loop is bounded; the cluster and
// the daemon are removed at the end, even on error.
import { execFileSync, spawnSync } from 'node:child_process';
import { freePort } from '../test/support/caddy.js';
import { CADDY_IMAGE, ensureCaddyImage } from '../test/support/caddy-image.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../test/support/images.js';
import { createCluster, destroyCluster, type Cluster } from '../test/support/swarm-cluster.js';
import { deployAndWait, formatCounts, loadAvg, log, numFlag, runMain, sleep, startLoad, waitServed } from './common.js';

const DEPLOYS = numFlag('deploys', 4, 1, 200);
const CLIENTS = numFlag('clients', 16, 1, 64);

async function main() {
  let cluster: Cluster | undefined;
  let t: TestDaemon | undefined;
  try {
    await Promise.all([ensureTestImages(), ensureCaddyImage()]);
    log(`creating the cluster (${await loadAvg()})`);
    cluster = await createCluster(3);
    const c = cluster;
    const images = [c.pushImage(WEB_V1), c.pushImage(WEB_V2)];
    c.docker(c.manager, ['load'], execFileSync('docker', ['save', CADDY_IMAGE], { maxBuffer: 1 << 30 }));
    t = await startTestDaemon('edge-posts', { DOCKER_HOST: c.manager.dockerHost, SVC_RUNTIME: 'swarm', SVC_PROBE_IMAGE: images[0]!, SVC_REGISTRY: c.registry, SVC_PROXY_IMAGE: CADDY_IMAGE });
    const port = await freePort();
    const res = await t.api('POST', '/api/apps', { name: 'posts', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: 4, health_check_path: '/health' });
    const appId = res.body.id as number;
    const target = t;
    await deployAndWait(target, appId, images[0]!, 180_000);
    await waitServed(port, 'v1', 30_000);
    log(`first deploy done (${await loadAvg()})`);
    const load = startLoad(port, { clients: CLIENTS, maxMs: DEPLOYS * 120_000 + 60_000 });
    try {
      await sleep(1000);
      for (let i = 1; i <= DEPLOYS; i++) {
        const k = i % 2;
        await deployAndWait(target, appId, images[k]!, 120_000);
        await waitServed(port, k ? 'v2' : 'v1', 15_000);
        log(`${i}/${DEPLOYS}: ${load.stats.total} requests, ${load.stats.total - load.stats.ok} failed`);
      }
      await sleep(1000);
    } finally {
      await load.stop();
    }
    const s = load.stats;
    console.log(`${DEPLOYS} deploys, ${CLIENTS} clients: ${s.total} requests, ${s.total - s.ok} failed; non-2xx ${formatCounts(s.non2xx)}; errors ${formatCounts(s.connErrors)} (${await loadAvg()})`);
    const hostErr = t.caddy.output().split('\n').filter((l) => /"level":"(error|warn)"/.test(l));
    // Both relays (docs/decisions/0039-two-relays-swapped.md): each load goes to the standby.
    const logs = [`${t.instance}-edge`, `${t.instance}-edge-b`].map((name) => spawnSync('docker', ['-H', c.manager.dockerHost, 'logs', name], { encoding: 'utf8', maxBuffer: 1 << 28 }));
    const r = { stdout: logs.map((x) => x.stdout).join('\n'), stderr: logs.map((x) => x.stderr).join('\n') };
    const relayErr = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /"level":"(error|warn)"/.test(l));
    const msgs = (ls: string[]) => {
      const m = new Map<string, number>();
      for (const l of ls) {
        const k = (/"msg":"([^"]*)"/.exec(l)?.[1] ?? '') + ' | ' + (/"error":"([^"]*)"/.exec(l)?.[1] ?? '').replace(/\d+\.\d+\.\d+\.\d+:\d+/g, 'ADDR').replace(/->[^ ]+/g, '');
        m.set(k, (m.get(k) ?? 0) + 1);
      }
      return [...m].map(([k, n]) => `  ${n} x ${k}`).join('\n');
    };
    console.log(`host Caddy ${hostErr.length} error/warn lines:\n${msgs(hostErr)}\nrelay ${relayErr.length} error/warn lines:\n${msgs(relayErr)}`);
    console.log('first failures:', s.failures.slice(0, 20).map((f) => `${new Date(f.at).toISOString().slice(11, 23)} ${f.what}`).join(', '));
    console.log('relay loads at:', `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('"uri":"/load"')).map((l) => new Date(Number(/"ts":([\d.]+)/.exec(l)?.[1]) * 1000).toISOString().slice(11, 23)).join(', '));
  } finally {
    await t?.close().catch(() => {});
    destroyCluster(cluster);
  }
}
runMain(main);
