// The manager's edge without a cluster (bench:relay-reloads, test/integration/edge-relays.test.ts): svc's real
// relays (createEdgeRelays: the proxy image, containers on a bridge network of this engine), a real host Caddy
// loaded by svc's adapter through relayedEdge, and the test app behind them, whose CGI answers a POST before
// reading its body. Two routes: `posts` (the app) and `decoy` (never requested: its DNS answer changes at each
// load, as a switch changes an app's). Everything is removed by close(), even after a failed start.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { silentLogger, type Logger } from '../../src/log.js';
import { createCaddyProxy } from '../../src/proxy/caddy.js';
import { edgePaths, type DnsRecords, type EdgePaths } from '../../src/proxy/edge-config.js';
import { relayedEdge, type ProxyParts } from '../../src/proxy/edge-proxy.js';
import { createEdgeRelays, type EdgeRelay } from '../../src/proxy/edge-relays.js';
import type { Route } from '../../src/proxy/proxy.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS, type Runtime } from '../../src/runtime/runtime.js';
import { freePort, startCaddy, type TestCaddy } from './caddy.js';
import { CADDY_IMAGE } from './caddy-image.js';
import { WEB_PORT, WEB_V1 } from './images.js';
import { waitFor } from './wait.js';

export interface RelayRig {
  instance: string;
  network: string;
  dataDir: string;
  paths: EdgePaths;
  runtime: Runtime;
  caddy: TestCaddy;
  /** The relays as the daemon drives them. */
  pair: EdgeRelay;
  /** The proxy parts wrapped as on a Swarm. */
  edge: ProxyParts;
  routes: Route[];
  /** The host Caddy's listener of `posts`. */
  port: number;
  /** The DNS answers of the i-th load (the decoy's address alternates). */
  recordsAt(i: number): DnsRecords;
  /** Another EdgeRelay over the same relays and files: a daemon restarted. */
  restart(): EdgeRelay;
  close(): Promise<void>;
}

/** Needs the test images and CADDY_IMAGE (built by the caller: ensureTestImages, ensureCaddyImage). */
export async function startRelayRig(o: { relays: 1 | 2; log?: Logger }): Promise<RelayRig> {
  const instance = `svctest-rr${randomBytes(3).toString('hex')}`;
  const network = `${instance}-net`;
  const dataDir = await mkdtemp('/tmp/svc-rr-');
  const runtime = createDockerRuntime({ log: silentLogger, instance });
  let caddy: TestCaddy | undefined;
  const close = async () => {
    await caddy?.stop().catch(() => {});
    for (const c of await runtime.list({ [LABELS.instance]: instance }).catch(() => [])) await runtime.remove(c.id).catch(() => {});
    try {
      execFileSync('docker', ['network', 'rm', network], { stdio: 'ignore' });
    } catch {
      /* not made */
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await runtime.ensureNetwork(network);
    const app = await runtime.run({ name: `${instance}-app`, image: WEB_V1, network, labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance } });
    if (!app.address) throw new Error('the test app has no address on the rig network');
    const paths = edgePaths(dataDir);
    const make = () => createEdgeRelays({ runtime, image: CADDY_IMAGE, instance, network, paths, user: `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`, log: o.log ?? silentLogger, relays: o.relays });
    const pair = make();
    caddy = await startCaddy();
    const proxy = createCaddyProxy({ adminUrl: caddy.adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort: 5353, log: silentLogger });
    const edge = relayedEdge(pair, paths.socket)({ routes: proxy, drain: proxy, writeDns: async () => {} });
    const [port, decoyPort] = [await freePort(), await freePort()];
    const routes: Route[] = [
      { app: 'posts', mode: 'port', port, upstream: { kind: 'dns', name: 'posts.svc.internal.', port: WEB_PORT } },
      { app: 'decoy', mode: 'port', port: decoyPort, upstream: { kind: 'dns', name: 'decoy.svc.internal.', port: WEB_PORT } },
    ];
    const recordsAt = (i: number): DnsRecords => ({ 'posts.svc.internal.': [app.address!], 'decoy.svc.internal.': `10.255.255.${1 + (i % 2)}` });
    await edge.writeDns(recordsAt(0));
    // As the proxy reconciler does: start what must run, load, until served (both relays answer).
    await waitFor(async () => {
      if ((await edge.ensureRunning!()) !== 'running') return false;
      await edge.routes.apply(routes);
      return edge.routes.serves(routes);
    }, { timeoutMs: 30_000, intervalMs: 100, what: 'the relays and the host Caddy serve the routes' });
    return { instance, network, dataDir, paths, runtime, caddy, pair, edge, routes, port, recordsAt, restart: make, close };
  } catch (err) {
    await close();
    throw err;
  }
}
