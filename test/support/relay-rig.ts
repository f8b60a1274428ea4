// The manager's edge without a cluster (test/integration/edge-relays.test.ts): svc's real relay and resolver
// (createEdgeRelay: the proxy image and the resolver image, containers on a bridge network of this engine), a
// real host Caddy loaded by svc's adapter through relayedEdge, svc's real DNS writer (the hosts files the
// resolver reads), and two test apps behind them (v1 and v2), whose CGI answers a POST before reading its body.
// One route, `posts`, whose answer names v1 or v2: a switch. Everything is removed by close(), even after a
// failed start.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { silentLogger, type Logger } from '../../src/log.js';
import { dnsmasqPaths } from '../../src/dns/dnsmasq.js';
import { writeHostsDir } from '../../src/dns/hosts.js';
import { createCaddyProxy } from '../../src/proxy/caddy.js';
import { edgePaths, type DnsRecords, type EdgePaths } from '../../src/proxy/edge-config.js';
import { relayedEdge, type ProxyParts } from '../../src/proxy/edge-proxy.js';
import { createEdgeRelay, type EdgeRelay } from '../../src/proxy/edge-relay.js';
import type { Route } from '../../src/proxy/proxy.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS, type Runtime } from '../../src/runtime/runtime.js';
import { freePort, startCaddy, type TestCaddy } from './caddy.js';
import { CADDY_IMAGE } from './caddy-image.js';
import { DNS_IMAGE } from './dns-image.js';
import { WEB_PORT, WEB_V1, WEB_V2 } from './images.js';
import { waitFor } from './wait.js';

export interface RelayRig {
  instance: string;
  network: string;
  dataDir: string;
  paths: EdgePaths;
  runtime: Runtime;
  caddy: TestCaddy;
  /** The relay as the daemon drives it. */
  relay: EdgeRelay;
  /** The proxy parts wrapped as on a Swarm. */
  edge: ProxyParts;
  routes: Route[];
  /** The host Caddy's listener of `posts`. */
  port: number;
  /** The DNS answers of the i-th switch: v1 when i is even, v2 when odd. */
  recordsAt(i: number): DnsRecords;
  /** Another EdgeRelay over the same containers and files: a daemon restarted. */
  restart(): EdgeRelay;
  close(): Promise<void>;
}

/** Needs the test images, CADDY_IMAGE and DNS_IMAGE (built by the caller: ensureTestImages, ensureCaddyImage, ensureDnsImage). */
export async function startRelayRig(o: { log?: Logger; before?: (r: { instance: string; runtime: Runtime; paths: EdgePaths; network: string }) => Promise<void> } = {}): Promise<RelayRig> {
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
    const labels = { [LABELS.managed]: 'true', [LABELS.instance]: instance };
    const [v1, v2] = await Promise.all([WEB_V1, WEB_V2].map((image, i) => runtime.run({ name: `${instance}-app${i + 1}`, image, network, labels })));
    if (!v1!.address || !v2!.address) throw new Error('a test app has no address on the rig network');
    const paths = edgePaths(dataDir);
    await o.before?.({ instance, runtime, paths, network });
    const user = `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
    const make = () => createEdgeRelay({ runtime, image: CADDY_IMAGE, resolverImage: async () => DNS_IMAGE, instance, network, hostsDir: dnsmasqPaths(dataDir).hostsDir, paths, user, log: o.log ?? silentLogger });
    const relay = make();
    caddy = await startCaddy();
    const proxy = createCaddyProxy({ adminUrl: caddy.adminUrl, httpPort: await freePort(), httpsPort: await freePort(), tlsIssuer: 'internal', dnsPort: 5353, log: silentLogger });
    const hostsDir = dnsmasqPaths(dataDir).hostsDir;
    const edge = relayedEdge(relay, paths.socket)({ routes: proxy, drain: proxy, writeDns: (records) => writeHostsDir(hostsDir, records) });
    const port = await freePort();
    const routes: Route[] = [{ app: 'posts', mode: 'port', port, upstream: { kind: 'dns', name: 'posts.svc.internal.', port: WEB_PORT } }];
    const recordsAt = (i: number): DnsRecords => ({ 'posts.svc.internal.': [(i % 2 === 0 ? v1 : v2)!.address!] });
    await edge.writeDns(recordsAt(0));
    // As the proxy reconciler does: start what must run, load, until served.
    await waitFor(async () => {
      if ((await edge.ensureRunning!()) !== 'running') return false;
      await edge.routes.apply(routes);
      return edge.routes.serves(routes);
    }, { timeoutMs: 30_000, intervalMs: 100, what: 'the relay and the host Caddy serve the routes' });
    return { instance, network, dataDir, paths, runtime, caddy, relay, edge, routes, port, recordsAt, restart: make, close };
  } catch (err) {
    await close();
    throw err;
  }
}
