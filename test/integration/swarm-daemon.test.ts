// The whole daemon with SVC_RUNTIME=swarm on a real three-node Swarm (test/support/swarm-cluster.ts): the
// same reconcilers as on one host, none knowing the runtime. A 3-replica app deploys with one replica per
// node (health checks through the overlay helper), a second deploy switches all three, GET /api/nodes shows
// where they run, a drained node's replica is healed onto the others by svc, and scaling adds and removes
// replicas (0 stops the app); a worker's engine killed, svc starts its replicas on the nodes left.
// Requests through Caddy (the edge relay) are covered by swarm-edge.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppCluster } from '../support/swarm-app-cluster.js';
import { destroyCluster, type Cluster, swarmDaemonEnv } from '../support/swarm-cluster.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';
import { uninstallInstance } from '../../src/cli/uninstall.js';
import { dnsmasqPaths } from '../../src/dns/dnsmasq.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let cluster: Cluster;
let t: TestDaemon;
let v1: string;
let v2: string;
let appId: number;

interface NodeJson {
  id: string;
  hostname: string;
  role: string;
  availability: string;
  state: string;
  replicas: { app?: string; container: string }[];
  down_since: string | null;
}

beforeAll(async () => {
  // The proxy image from the cluster's registry: the edge relay and the node agents run it.
  let caddy: string;
  ({ cluster, v1, v2, caddy } = await createAppCluster());
  t = await startTestDaemon('swarm', swarmDaemonEnv(cluster, { probe: v1, proxy: caddy }));
  const res = await t.api('POST', '/api/apps', { name: 'sw-web', internal_port: 3000, access_mode: 'port', fallback_port: 18999, replicas: 3, health_check_path: '/health' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  appId = res.body.id;
});

afterAll(async () => {
  await t?.close();
  destroyCluster(cluster);
});

const nodes = async () => (await t.api<NodeJson[]>('GET', '/api/nodes')).body;
/** The app's addresses in svc's DNS answer (the hosts file the DNS writer keeps). */
const dnsAnswer = (): string[] => {
  const dir = dnsmasqPaths(t.dataDir).hostsDir;
  const file = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith('sw-web.')) : undefined;
  return file ? readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean) : [];
};
/** Replica containers per node, of the app. */
const spread = async () => (await nodes()).map((n) => n.replicas.filter((r) => r.app === 'sw-web').length);

describe('svc on a Swarm', () => {
  it('deploys a 3-replica app with one replica on each node, then switches it to a new version', async () => {
    const first = await requestImageDeploy(t, appId, v1);
    await deployReaching(t, first, (d) => d.status === 'success', 'to succeed', 90_000);
    await waitFor(async () => (await spread()).join() === '1,1,1', { timeoutMs: 20_000, what: 'one replica per node' });
    const second = await requestImageDeploy(t, appId, v2);
    await deployReaching(t, second, (d) => d.status === 'success', 'to succeed', 90_000);
    await waitFor(async () => {
      const all = (await nodes()).flatMap((n) => n.replicas.filter((r) => r.app === 'sw-web').map((r) => r.container));
      return all.length === 3 && all.every((c) => c.includes(`-${second}`));
    }, { timeoutMs: 30_000, what: 'three replicas of the second deploy, the first one gone' });
    expect((await spread()).join()).toBe('1,1,1');
  });

  it('a drained node: svc starts its replica on another node', async () => {
    const worker = (await nodes()).find((n) => n.role === 'worker' && n.replicas.length > 0)!;
    const put = await t.api('PUT', `/api/nodes/${worker.id}`, { availability: 'drain' });
    expect(put.status).toBe(200);
    await waitFor(async () => {
      const now = await nodes();
      const total = now.reduce((s, n) => s + n.replicas.filter((r) => r.app === 'sw-web').length, 0);
      return total === 3 && now.find((n) => n.id === worker.id)!.replicas.length === 0;
    }, { timeoutMs: 45_000, what: 'three replicas again, none on the drained node' });
    const app = (await t.api('GET', `/api/apps/${appId}`)).body;
    expect(app.status).toBe('active');
    await t.api('PUT', `/api/nodes/${worker.id}`, { availability: 'active' });
  });

  it('scales down, to 0 (inactive, no task left) and up again', async () => {
    const total = async () => (await spread()).reduce((a, b) => a + b, 0);
    const scale = async (replicas: number) => expect((await t.api('PUT', `/api/apps/${appId}`, { replicas })).status).toBe(200);
    await scale(2);
    await waitFor(async () => (await total()) === 2, { timeoutMs: 30_000, what: 'two replicas' });
    await scale(0);
    await waitFor(async () => (await total()) === 0 && (await t.api('GET', `/api/apps/${appId}`)).body.status === 'inactive', { timeoutMs: 30_000, what: 'no replica, app inactive' });
    await scale(3);
    await waitFor(async () => (await spread()).filter((n) => n === 1).length === 3, { timeoutMs: 45_000, what: 'three replicas, one per node' });
    // Placed is not serving: each replica joins the DNS answer after its own health check.
    await waitFor(() => dnsAnswer().length === 3, { timeoutMs: 30_000, what: 'three addresses in the DNS answer' });
    // Active from the pass that started the first replica on (it used to stay `inactive` until a later pass).
    expect((await t.api('GET', `/api/apps/${appId}`)).body.status).toBe('active');
  });

  it("a worker's engine killed: svc starts its replicas on the nodes left, the app stays active", async () => {
    // The worker of slot 0 (the app's live container) when a worker runs it: the case whose status once read
    // `inactive` for seconds (docs/decisions/0037-swarm-one-service-per-replica.md).
    const live = (await t.api('GET', `/api/apps/${appId}`)).body.live_container_name as string;
    const all = await nodes();
    const worker = all.find((n) => n.role === 'worker' && n.replicas.some((r) => r.container === live)) ?? all.find((n) => n.role === 'worker' && n.replicas.length > 0)!;
    const t0 = Date.now();
    await cluster.killNode(cluster.nodes.find((n) => n.hostname === worker.hostname)!);
    await waitFor(async () => {
      const now = await nodes();
      const total = now.reduce((s, n) => s + n.replicas.filter((r) => r.app === 'sw-web').length, 0);
      const lost = now.find((n) => n.id === worker.id)!;
      return total === 3 && lost.state === 'down' && lost.replicas.length === 0;
    }, { timeoutMs: 45_000, what: 'three replicas on the two nodes left' });
    console.log(`worker lost (${worker.replicas.some((r) => r.container === live) ? 'it ran slot 0' : 'no worker ran slot 0'}): the app back at 3 replicas after ${Date.now() - t0} ms`);
    expect((await t.api('GET', `/api/apps/${appId}`)).body.status).toBe('active');
    // The loss is a stored node event (and a `node_down` notification for channels that chose it).
    await waitFor(async () => (await t.api<{ node_id: string; kind: string }[]>('GET', '/api/nodes/events')).body.some((e) => e.node_id === worker.id && e.kind === 'down'), { timeoutMs: 10_000, what: 'the node_down event stored' });
    expect((await nodes()).find((n) => n.id === worker.id)!.down_since).toMatch(/^20\d\d-/);
  });

  it('svc uninstall on the manager removes the Swarm services, the probe helper and the overlay', async () => {
    await t.daemon.stop();
    const d = (args: string[]) => cluster.docker(cluster.manager, args).trim();
    expect(d(['service', 'ls', '-q', '--filter', `label=svc.instance=${t.instance}`])).not.toBe('');
    const lines = await uninstallInstance({ dataDir: t.dataDir, instance: t.instance, network: t.network, dockerHost: cluster.manager.dockerHost });
    expect(lines.filter((l) => l.startsWith('removed Swarm service ')).length).toBeGreaterThanOrEqual(3);
    expect(lines).toContain(`removed container ${t.instance}-probe`);
    expect(lines, lines.join('\n')).toContain(`removed network ${t.network}`);
    expect(d(['service', 'ls', '-q', '--filter', `label=svc.instance=${t.instance}`])).toBe('');
    expect(d(['ps', '-aq', '--filter', `label=svc.instance=${t.instance}`])).toBe('');
    expect(d(['network', 'ls', '-q', '--filter', `label=svc.instance=${t.instance}`])).toBe('');
  });
});
