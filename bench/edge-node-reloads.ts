// The reload race through an edge node (issue 19, docs/decisions/0043-edge-nodes.md): svc on a three-node Swarm of this machine (test/support/swarm-cluster.ts), one worker labelled
// `svc.edge=true`, a 3-replica port-mode app of the test image (its CGI answers a POST before reading the body).
// Once the node serves, the daemon is stopped (the edge services, agents and the manager's relays keep running)
// and the bench drives the node with the daemon's own fleet code (createEdgeFleet): many loads of new DNS
// answers (an unused decoy app's, the path of a switch) while keep-alive GET and slow-upload POST clients send
// to the edge node's address. Rounds alternate the baseline (`relays 1`: every load reloads the node's relay
// carrying the traffic, as before) and the pair (`relays 2`: the standby loaded, then the link swapped).
//
//   npm run bench:edge-node-reloads -- [--loads 150] [--clients 16] [--post-delay 10] [--rounds 2] [--only 0|1|2]
//
// Needs root (network namespaces). Traffic goes only to loopback and to the cluster's namespaces; every loop is
// bounded; the cluster and the daemon are removed at the end, even on error.
import Docker from 'dockerode';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { deriveKey } from '../src/crypto.js';
import { silentLogger } from '../src/log.js';
import type { CaddyConfigOptions } from '../src/proxy/config.js';
import type { DnsRecords } from '../src/proxy/edge-config.js';
import { createEdgeFleet } from '../src/proxy/edge-nodes.js';
import { appDnsName, type Route } from '../src/proxy/proxy.js';
import { createEdgeNodes } from '../src/runtime/swarm-edges.js';
import { freePort } from '../test/support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { WEB_PORT } from '../test/support/images.js';
import { createAppCluster } from '../test/support/swarm-app-cluster.js';
import { destroyCluster, type Cluster, swarmDaemonEnv } from '../test/support/swarm-cluster.js';
import { formatCounts, loadAvg, log, ms, numFlag, pct, runMain, startLoad, reloadStorm, until } from './common.js';

const LOADS = numFlag('loads', 150, 1, 1000);
const CLIENTS = numFlag('clients', 16, 1, 64);
const DELAY = numFlag('post-delay', 10, 0, 1000);
const ROUNDS = numFlag('rounds', 2, 1, 10);
/** 1 or 2: only that variant (0: both, alternated). */
const ONLY = numFlag('only', 0, 0, 2);

async function main() {
  let cluster: Cluster | undefined;
  let t: TestDaemon | undefined;
  try {
    log(`creating the cluster (${await loadAvg()})`);
    const made = await createAppCluster();
    cluster = made.cluster;
    const c = cluster;
    const d = (args: string[]) => c.docker(c.manager, args).trim();
    const edge = c.nodes[2]!;
    t = await startTestDaemon('bench-enr', swarmDaemonEnv(c, { probe: made.v1, proxy: made.caddy }));
    const daemon = t;
    const port = await freePort();
    const res = await daemon.api('POST', '/api/apps', { name: 'enr-web', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port, replicas: 3, health_check_path: '/health' });
    if (res.status !== 201) throw new Error(`create app: ${res.status} ${JSON.stringify(res.body)}`);
    await deployReaching(daemon, await requestImageDeploy(daemon, res.body.id, made.v1), (x) => x.status === 'success', 'to succeed', 120_000);
    const edgeId = d(['node', 'inspect', '--format', '{{.ID}}', edge.hostname]);
    d(['node', 'update', '--label-add', 'svc.edge=true', edge.hostname]);
    const answers = async () => (await fetch(`http://${edge.address}:${port}/`, { signal: AbortSignal.timeout(3000) })).status === 200;
    await until('the edge node serving', answers);
    // The app's task addresses (what the daemon's DNS answers hold), then the daemon stopped: the bench drives the node.
    const tasks = d(['service', 'ps', '-q', '--filter', 'desired-state=running', ...lines(d(['service', 'ls', '-q', '--filter', `label=svc.instance=${daemon.instance}`, '--filter', 'label=svc.app=enr-web']))]);
    const addresses = lines(tasks).flatMap((id) => {
      const doc = JSON.parse(d(['inspect', '--type', 'task', id]))[0] as { NetworksAttachments?: { Network?: { Spec?: { Name?: string } }; Addresses?: string[] }[] };
      return (doc.NetworksAttachments ?? []).filter((n) => n.Network?.Spec?.Name === daemon.network).flatMap((n) => (n.Addresses ?? []).map((a) => a.split('/')[0]!));
    });
    if (addresses.length !== 3) throw new Error(`expected 3 task addresses, found ${addresses.join(', ')}`);
    await daemon.daemon.stop();
    log(`edge node ${edge.hostname} serving; daemon stopped; app tasks ${addresses.join(', ')} (${await loadAvg()})`);

    const decoyPort = await freePort();
    const routes: Route[] = [
      { app: 'enr-web', mode: 'port', port, upstream: { kind: 'dns', name: appDnsName('enr-web'), port: WEB_PORT } },
      { app: 'decoy', mode: 'port', port: decoyPort, upstream: { kind: 'dns', name: appDnsName('decoy'), port: WEB_PORT } },
    ];
    // Another decoy address at every load (not alternating: a flip-back would make the pair's loads link-only swaps).
    const recordsAt = (i: number): DnsRecords => ({ [appDnsName('enr-web')]: addresses, [appDnsName('decoy')]: `10.255.${(i >> 8) & 255}.${i & 255}` });
    const proxy: CaddyConfigOptions = { adminUrl: 'http://127.0.0.1:2019', httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort: 5353 };
    const docker = new Docker({ socketPath: c.manager.dockerHost.replace(/^unix:\/\//, '') });
    const edgeNodes = createEdgeNodes({ docker, instance: daemon.instance, network: daemon.network });
    const key = deriveKey(Buffer.alloc(32, 9), 'swarm node agents').toString('hex');

    /** The edge node Caddy's error lines since `since` (RFC 3339), by message: a dial of the link in its swap's instant shows as ENOENT. */
    const caddyErrors = (since: string) => {
      const id = c.docker(edge, ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${daemon.instance}-edge-proxy-${edgeId.slice(0, 12)}`]).trim();
      const out = spawnSync('docker', ['-H', edge.dockerHost, 'logs', '--since', since, id], { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 60_000 });
      const errs = new Map<string, number>();
      for (const l of `${out.stdout}\n${out.stderr}`.split('\n').filter((x) => /"level":"(error|warn)"/.test(x))) {
        const k = (/"error":"([^"]*)"/.exec(l)?.[1] ?? /"msg":"([^"]*)"/.exec(l)?.[1] ?? '?').replace(/unix\/\S+?:/g, 'unix:').replace(/->[^ ]+/g, '');
        errs.set(k, (errs.get(k) ?? 0) + 1);
      }
      return formatCounts(errs);
    };

    const round = async (relays: 1 | 2) => {
      const since = new Date().toISOString();
      const fleet = createEdgeFleet({ targets: () => edgeNodes.targets(), agentSocket: join(daemon.dataDir, 'edge', 'agent.sock'), key, proxy, log: silentLogger, relays });
      await fleet.setRecords(recordsAt(0));
      fleet.setRoutes(routes);
      await fleet.idle();
      await until('the edge node serving the bench routes', answers, 30_000);
      const load = startLoad(port, { clients: CLIENTS, maxMs: LOADS * 3_000 + 30_000, host: edge.address, postDelayMs: DELAY });
      let waits: number[];
      try {
        waits = await reloadStorm(LOADS, (i) => fleet.setRecords(recordsAt(i)));
      } finally {
        await load.stop();
      }
      const s = load.stats;
      return `relays ${relays}: ${LOADS} loads through edge node ${edgeId.slice(0, 12)}, ${CLIENTS} clients, POST body 0-${DELAY} ms after its headers: ${s.total} requests, ${s.total - s.ok} failed; non-2xx ${formatCounts(s.non2xx)}; errors ${formatCounts(s.connErrors)}; switch wait p50 ${ms(pct(waits, 50))} p95 ${ms(pct(waits, 95))} max ${ms(Math.max(...waits))}; node Caddy error lines ${caddyErrors(since)} (${await loadAvg()})`;
    };
    for (let r = 1; r <= ROUNDS; r++) {
      for (const v of ONLY === 1 ? ([1] as const) : ONLY === 2 ? ([2] as const) : ([1, 2] as const)) console.log(`round ${r}: ${await round(v)}`);
    }
  } finally {
    await t?.close().catch((err: Error) => log(`daemon close: ${err.message}`));
    if (cluster) destroyCluster(cluster);
  }
}

const lines = (s: string) => s.split('\n').map((x) => x.trim()).filter(Boolean);
runMain(main);
