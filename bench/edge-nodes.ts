// Edge nodes benchmark (issue 19, docs/decisions/0043-edge-nodes.md): svc with SVC_RUNTIME=swarm on a three-node Swarm
// of this machine (test/support/swarm-cluster.ts), one worker labelled `svc.edge=true`.
//   1. Label -> the app answering on the node's address, and label removed -> its listener closed (--cycles).
//   2. Deploys of a 4-replica app under keep-alive GET/POST clients, half on the manager's listener, half on the
//      edge node's address: failed requests on each (goal 0 on both).
//   3. The edge node's engine killed: deploys go on under clients on the manager's listener; failed requests
//      (goal 0) and each deploy's time beside those of step 2 (a node that is down must not hold a switch).
//
//   npm run bench:edge-nodes -- [--deploys 10] [--cycles 3] [--clients 16]
//
// Needs root (network namespaces). Traffic goes only to loopback and to the cluster's namespaces; every loop is
// bounded; the cluster and the daemon are removed at the end, even on error.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../test/support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { WEB_PORT } from '../test/support/images.js';
import { createAppCluster } from '../test/support/swarm-app-cluster.js';
import { destroyCluster, type Cluster, swarmDaemonEnv } from '../test/support/swarm-cluster.js';
import { formatCounts, httpText, loadAvg, log, numFlag, pct, runMain, sleep, startLoad, traceDeploy, until } from './common.js';

const DEPLOYS = numFlag('deploys', 10, 1, 100);
const CYCLES = numFlag('cycles', 3, 1, 20);
const CLIENTS = numFlag('clients', 16, 2, 64);
const REPLICAS = 4;
const DEPLOY_TIMEOUT_MS = 120_000;

const summary = (xs: number[]) => (xs.length ? `p50 ${(pct(xs, 50) / 1000).toFixed(2)} s, min ${(Math.min(...xs) / 1000).toFixed(2)} s, max ${(Math.max(...xs) / 1000).toFixed(2)} s (${xs.length})` : 'none');

async function main() {
  let cluster: Cluster | undefined;
  let t: TestDaemon | undefined;
  try {
    log(`creating the cluster (${await loadAvg()})`);
    const made = await createAppCluster();
    cluster = made.cluster;
    const c = cluster;
    const images = [made.v1, made.v2] as const;
    const caddy = made.caddy;
    const d = (args: string[]) => c.docker(c.manager, args).trim();
    const edge = c.nodes[2]!;
    t = await startTestDaemon('bench-edge', swarmDaemonEnv(c, { probe: images[0], proxy: caddy }));
    const daemon = t;
    const port = await freePort();
    const res = await daemon.api('POST', '/api/apps', { name: 'bench-edge', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: REPLICAS, health_check_path: '/health' });
    if (res.status !== 201) throw new Error(`create app: ${res.status} ${JSON.stringify(res.body)}`);
    const appId = res.body.id as number;
    let k = 0;
    const deploy = async () => {
      k = 1 - k;
      const t0 = performance.now();
      const r = await daemon.api('POST', `/api/apps/${appId}/deploys`, { image_ref: images[k] });
      if (r.status !== 202) throw new Error(`deploy: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      const trace = await traceDeploy(daemon.url, daemon.token, r.body.id as number, DEPLOY_TIMEOUT_MS).catch(async (err: Error) => {
        const now = await daemon.api('GET', `/api/deploys/${r.body.id}`);
        throw new Error(`deploy ${r.body.id} not done within ${DEPLOY_TIMEOUT_MS / 1000} s (${err.message}): ${JSON.stringify(now.body).slice(0, 1500)}`);
      });
      if (trace.status !== 'success') throw new Error(`deploy ${r.body.id} ended ${trace.status}: ${JSON.stringify(trace.events.at(-1))}`);
      return performance.now() - t0;
    };
    await deploy();
    const answers = async (host: string) => (await httpText(`http://${host}:${port}/`, 2000))?.status === 200;
    const closed = async (host: string) => (await httpText(`http://${host}:${port}/`, 2000)) === undefined;

    // 1. Label and unlabel.
    const on: number[] = [];
    const off: number[] = [];
    for (let i = 0; i < CYCLES; i++) {
      d(['node', 'update', '--label-add', 'svc.edge=true', edge.hostname]);
      on.push(await until('the edge node serving', () => answers(edge.address)));
      if (i === CYCLES - 1) break;
      d(['node', 'update', '--label-rm', 'svc.edge', edge.hostname]);
      off.push(await until("the edge node's listener closed", () => closed(edge.address)));
      log(`cycle ${i + 1}: serving ${Math.round(on.at(-1)!)} ms after the label, closed ${Math.round(off.at(-1)!)} ms after its removal`);
    }

    // 2. Deploys under load on both edges.
    const half = Math.floor(CLIENTS / 2);
    const loads = { manager: startLoad(port, { clients: half, maxMs: DEPLOYS * DEPLOY_TIMEOUT_MS }), edge: startLoad(port, { clients: CLIENTS - half, maxMs: DEPLOYS * DEPLOY_TIMEOUT_MS, host: edge.address }) };
    const times: number[] = [];
    try {
      await sleep(1000);
      for (let i = 1; i <= DEPLOYS; i++) {
        times.push(await deploy());
        if (i % 5 === 0) log(`${i}/${DEPLOYS} deploys; manager ${loads.manager.stats.total} requests (${loads.manager.stats.total - loads.manager.stats.ok} failed), edge node ${loads.edge.stats.total} (${loads.edge.stats.total - loads.edge.stats.ok} failed)`);
      }
      await sleep(1000);
    } finally {
      await Promise.all([loads.manager.stop(), loads.edge.stop()]);
    }

    const line = (name: string, s: typeof loads.edge.stats) => `${name}: ${s.total} requests, ${s.total - s.ok} failed (non-2xx ${formatCounts(s.non2xx)}; connection errors ${formatCounts(s.connErrors)})`;
    console.log(`\nEdge nodes benchmark (3 nodes in network namespaces of one machine, ${REPLICAS} replicas, one worker labelled svc.edge=true; ${await loadAvg()})`);
    console.log(`  label -> the app answering on the node's address: ${summary(on)}; label removed -> listener closed: ${summary(off)}`);
    console.log(`  ${DEPLOYS} deploys under ${CLIENTS} keep-alive clients (GET / and POST /cgi-bin/echo), half on each edge; each deploy to its end ${summary(times)}`);
    console.log(`    ${line("manager's listener", loads.manager.stats)}`);
    console.log(`    ${line("edge node's address", loads.edge.stats)}`);

    // 3. The edge node lost: once Swarm reports it down (a deploy before that may place a replica on it, which
    // is Swarm's placement, not the edge), deploys go on through the manager.
    await c.killNode(edge);
    const downAfter = await until('the edge node reported down', async () => {
      // An answer that is not the list (the engine busy: 503) is asked again.
      const nodes = (await daemon.api<{ hostname: string; state: string }[]>('GET', '/api/nodes')).body;
      return Array.isArray(nodes) && nodes.find((n) => n.hostname === edge.hostname)?.state === 'down';
    });
    const lost = startLoad(port, { clients: half, maxMs: 3 * DEPLOY_TIMEOUT_MS });
    const after: number[] = [];
    try {
      for (let i = 0; i < 3; i++) after.push(await deploy());
    } finally {
      await lost.stop();
    }

    console.log(`  the edge node's engine killed (reported down after ${(downAfter / 1000).toFixed(1)} s), 3 deploys under ${half} clients on the manager: ${summary(after)}`);
    console.log(`    ${line("manager's listener", lost.stats)}`);
  } catch (err) {
    // The manager's engine log, for a failure's cause (the cluster's directory goes with it).
    if (cluster) for (const n of cluster.nodes) await copyFile(join(n.dir, 'dockerd.log'), `/tmp/bench-edge-nodes-n${n.index}-dockerd.log`).catch(() => {});
    throw err;
  } finally {
    await t?.close().catch(() => {});
    destroyCluster(cluster);
  }
}

runMain(main);
