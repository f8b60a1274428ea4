// Node agents on a real three-node Swarm (test/support/swarm-cluster.ts; docs/decisions/0041-node-agents.md):
// the daemon makes one agent per worker (its engine socket from the node's `svc.engine-socket` label), and
// reaches a replica on a worker for `exec` (what readiness checks and dumps use) and for a terminal, which no
// longer answers 409 `replica_on_other_node`; from inside an app container on the overlay, an agent answers
// 403 without the key and with a wrong one; a node whose agent is gone is a clear error at once (409 for a
// terminal); an OOM kill on a worker is confirmed through its agent; a node that leaves loses its agent;
// `svc uninstall` removes the agents and their secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createCluster, destroyCluster, type Cluster, type ClusterNode, swarmDaemonEnv } from '../support/swarm-cluster.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_OOM, WEB_V1 } from '../support/images.js';
import { CADDY_IMAGE, ensureCaddyImage } from '../support/caddy-image.js';
import { freePort } from '../support/caddy.js';
import { waitFor } from '../support/wait.js';
import { uninstallInstance } from '../../src/cli/uninstall.js';
import { LABELS, type ContainerSpec } from '../../src/runtime/runtime.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let cluster: Cluster;
let t: TestDaemon | undefined;
let appId: number;
let oomImage: string;

interface NodeJson {
  id: string;
  hostname: string;
  role: string;
  replicas: { app?: string; container: string }[];
}

const d = (args: string[]) => cluster.docker(cluster.manager, args).trim();
const lines = (s: string) => s.split('\n').filter(Boolean);
const agents = () => lines(d(['service', 'ls', '--filter', `label=svc.instance=${t!.instance}`, '--filter', 'label=svc.role=agent', '--format', '{{.Name}} {{.Replicas}}']));
const nodeOf = (hostname: string) => cluster.nodes.find((n) => n.hostname === hostname)!;
/** The container id (= its host name) of a service's running task, asked of the engine of the node that runs it. */
const containerOn = (node: ClusterNode, service: string) => cluster.docker(node, ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${service}`]).trim();

/** A command through the daemon's terminal WebSocket (what `svc exec` does): its output and exit code, or the refusal's status. */
function terminal(replica: number, cmd: string[]): Promise<{ status: number; out: string; code?: number; body?: string }> {
  const url = new URL(`/api/apps/${appId}/exec`, t!.url.replace(/^http/, 'ws'));
  for (const a of cmd) url.searchParams.append('cmd', a);
  url.searchParams.set('replica', String(replica));
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${t!.token}` } });
    let out = '';
    let code: number | undefined;
    const timer = setTimeout(() => ws.terminate(), 20_000);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, out, body }));
    });
    ws.on('message', (data, binary) => {
      if (binary) out += Buffer.from(data as Buffer).toString();
      else {
        const m = JSON.parse(String(data)) as { type: string; code?: number; error?: string };
        if (m.type === 'exit') code = m.code;
        if (m.type === 'error') out += `[error] ${m.error}`;
      }
    });
    ws.on('close', () => {
      clearTimeout(timer);
      resolve({ status: 101, out, code });
    });
    ws.on('error', () => resolve({ status: -1, out }));
  });
}

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureCaddyImage()]);
  cluster = await createCluster(3);
  const v1 = cluster.pushImage(WEB_V1);
  oomImage = cluster.pushImage(WEB_OOM);
  // The agents run the proxy image on every worker: from the cluster's registry (the manager keeps its copy for the relay).
  const caddy = cluster.pushImage(CADDY_IMAGE);
  for (const w of cluster.nodes.slice(1)) d(['node', 'update', '--label-add', `svc.engine-socket=${w.socket}`, w.hostname]);
  t = await startTestDaemon('swagent', swarmDaemonEnv(cluster, { probe: v1, proxy: caddy }));
  const res = await t.api('POST', '/api/apps', { name: 'ag-web', internal_port: 3000, access_mode: 'port', fallback_port: await freePort(), replicas: 3, health_check_path: '/health' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  appId = res.body.id;
  await deployReaching(t, await requestImageDeploy(t, appId, v1), (x) => x.status === 'success', 'to succeed', 90_000);
}, 240_000);

afterAll(async () => {
  await t?.close().catch(() => {});
  destroyCluster(cluster);
});

describe('node agents', () => {
  it('one agent per worker, running; an exec and a terminal reach the replica on a worker', async () => {
    const workers = cluster.nodes.slice(1);
    await waitFor(() => agents().length === 2 && agents().every((a) => a.endsWith(' 1/1')), { timeoutMs: 60_000, what: `an agent running on each worker (${agents().join(', ')})` });
    expect(agents().map((a) => a.split(' ')[0]).sort()).toEqual(
      lines(d(['node', 'ls', '--filter', 'role=worker', '-q'])).map((id) => `${t!.instance}-agent-${id.slice(0, 12)}`).sort(),
    );
    const nodes = (await t!.api<NodeJson[]>('GET', '/api/nodes')).body;
    await waitFor(async () => (await t!.api<NodeJson[]>('GET', '/api/nodes')).body.every((n) => n.replicas.filter((r) => r.app === 'ag-web').length === 1), { timeoutMs: 20_000, what: 'one replica per node' });
    const onWorkers = (await t!.api<NodeJson[]>('GET', '/api/nodes')).body.filter((n) => n.role === 'worker').map((n) => ({ node: nodeOf(n.hostname), container: n.replicas.find((r) => r.app === 'ag-web')!.container }));
    expect(onWorkers).toHaveLength(workers.length);
    expect(nodes.length).toBe(3);
    // The agents are infrastructure, not replicas on the Nodes page.
    expect(nodes.flatMap((n) => n.replicas).every((r) => r.app === 'ag-web')).toBe(true);
    for (const { node, container } of onWorkers) {
      const id = containerOn(node, container);
      expect(id, `${container} on ${node.hostname}`).toMatch(/^[0-9a-f]{12}$/);
      // The runtime's exec (readiness checks, dumps): the replica's own host name, from its own node's engine.
      const r = await t!.daemon.runtime.exec(container, ['sh', '-c', 'hostname; echo to-stderr >&2; exit 5']);
      expect(r).toEqual({ exitCode: 5, stdout: `${id}\n`, stderr: 'to-stderr\n' });
      // The terminal: no 409 replica_on_other_node any more.
      const slot = Number(/-r(\d+)$/.exec(container)?.[1] ?? 0);
      const term = await terminal(slot, ['sh', '-c', 'hostname']);
      expect(term.status, term.body).toBe(101);
      expect(term.out.trim()).toBe(id);
      expect(term.code).toBe(0);
    }
    // A figure, not a goal: what the way through the relay and an agent adds to an exec (10 each, in turn).
    const manager = (await t!.api<NodeJson[]>('GET', '/api/nodes')).body.find((n) => n.role === 'manager')!.replicas.find((r) => r.app === 'ag-web')!.container;
    const ms: Record<string, number[]> = { manager: [], worker: [] };
    for (let i = 0; i < 10; i++) {
      for (const [where, name] of [['manager', manager], ['worker', onWorkers[0]!.container]] as const) {
        const t0 = performance.now();
        await t!.daemon.runtime.exec(name, ['true']);
        ms[where]!.push(performance.now() - t0);
      }
    }
    const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
    console.log(`exec 'true', p50 of 10: on the manager ${p50(ms.manager!)} ms, on a worker through its agent ${p50(ms.worker!)} ms`);
  }, 120_000);

  it('an OOM kill on a worker is confirmed through its agent (OOMKilled), as on the manager', async () => {
    const rt = t!.daemon.runtime;
    // Another instance's labels: the daemon's reconcilers leave these two alone.
    const labels = (slot: number) => ({ [LABELS.managed]: 'true', [LABELS.instance]: `${t!.instance}-oom`, [LABELS.app]: 'oom', [LABELS.appId]: '1', [LABELS.deploy]: '1', [LABELS.role]: 'app', 'svc.slot': String(slot) });
    const spec = (slot: number, extra: Partial<ContainerSpec> = {}): ContainerSpec => ({
      name: `${t!.instance}-oom-1${slot ? `-r${slot}` : ''}`,
      image: oomImage,
      network: t!.network,
      init: true,
      env: { ALLOC_MB: '256' },
      resources: { memoryMb: 16 },
      labels: labels(slot),
      ...extra,
    });
    const dir = await mkdtemp(join(tmpdir(), 'swagent-oom-'));
    try {
      // The mount pins slot 0 to the manager; slot 1 is spread away from it, to a worker.
      await rt.run(spec(0, { mounts: [{ source: dir, target: '/data' }] }));
      await rt.run(spec(1));
      const ended = (name: string) =>
        waitFor(async () => {
          const info = await rt.inspect(name, t!.network);
          return info?.state === 'exited' ? info : undefined;
        }, { timeoutMs: 30_000, what: `${name} killed` });
      expect(await ended(`${t!.instance}-oom-1`)).toMatchObject({ exitCode: 137, oomKilled: true });
      const onWorker = await ended(`${t!.instance}-oom-1-r1`);
      // Asked of the worker's engine through its agent: the truth, not "most likely".
      expect(onWorker).toMatchObject({ exitCode: 137, oomKilled: true });
      expect(onWorker.oomLikely).toBeUndefined();
    } finally {
      // Not the daemon's instance, so not its runtime's to remove: by hand.
      for (const slot of [0, 1]) {
        try {
          cluster.docker(cluster.manager, ['service', 'rm', spec(slot).name]);
        } catch {
          // never made (the run before failed)
        }
      }
      await waitFor(() => d(['ps', '-aq', '--filter', `label=svc.instance=${t!.instance}-oom`]) === '', { timeoutMs: 30_000, what: 'the OOM tasks gone' });
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('from inside an app container on the overlay, an agent answers 403 without the key and with a wrong one', async () => {
    const agent = agents()[0]!.split(' ')[0]!;
    const task = d(['service', 'ps', '-q', '--filter', 'desired-state=running', agent]).split('\n')[0]!;
    const address = d(['inspect', task, '--format', `{{range .NetworksAttachments}}{{if eq .Network.Spec.Name "${t!.network}"}}{{index .Addresses 0}}{{end}}{{end}}`]).replace(/\/\d+$/, '');
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // The replica on the manager: an app's container, on the overlay like any other.
    const manager = (await t!.api<NodeJson[]>('GET', '/api/nodes')).body.find((n) => n.role === 'manager')!;
    const inApp = manager.replicas.find((r) => r.app === 'ag-web')!.container;
    const ask = async (request: string) => {
      // busybox nc with a raw HTTP/1.0 request (busybox wget segfaults in these containers: the cluster note).
      const r = await t!.daemon.runtime.exec(inApp, ['/bin/busybox', 'sh', '-c', 'printf "$1" | nc -w 5 "$2" 2380 | head -n 1', 'ask', request, address]);
      return r.stdout.trim();
    };
    const create = '{"Cmd":["id"],"AttachStdout":true}';
    const exec = (key?: string) =>
      `POST /containers/${inApp}/exec HTTP/1.0\r\nHost: agent\r\nContent-Type: application/json\r\nContent-Length: ${create.length}\r\n${key ? `Svc-Agent-Key: ${key}\r\n` : ''}\r\n${create}`;
    expect(await ask(exec())).toMatch(/^HTTP\/1\.[01] 403/);
    expect(await ask(exec('0'.repeat(64)))).toMatch(/^HTTP\/1\.[01] 403/);
    expect(await ask('GET /containers/json HTTP/1.0\r\nHost: agent\r\n\r\n')).toMatch(/^HTTP\/1\.[01] 403/);
  }, 60_000);

  it('a node whose agent is gone: a clear error at once, and the terminal answers 409', async () => {
    const worker = (await t!.api<NodeJson[]>('GET', '/api/nodes')).body.find((n) => n.role === 'worker')!;
    const container = worker.replicas.find((r) => r.app === 'ag-web')!.container;
    const agent = `${t!.instance}-agent-${worker.id.slice(0, 12)}`;
    d(['service', 'rm', agent]);
    const t0 = Date.now();
    await expect(t!.daemon.runtime.exec(container, ['true'])).rejects.toThrow(`the agent of node ${worker.hostname} is not running yet (no service ${agent})`);
    const term = await terminal(Number(/-r(\d+)$/.exec(container)?.[1] ?? 0), ['true']);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // A refused WebSocket handshake carries the status only (@hono/node-server writes no body); the
    // sentence is the runtime's above (unit-tested in test/unit/terminal/swarm-replicas.test.ts).
    expect(term.status).toBe(409);
  }, 30_000);

  it("a node that leaves loses its agent; the next reconcile brings back one removed by hand", async () => {
    const workers = (await t!.api<NodeJson[]>('GET', '/api/nodes')).body.filter((n) => n.role === 'worker');
    // The previous test removed the agent of workers[0]; workers[1] now leaves the Swarm.
    const leaving = workers[1]!;
    cluster.docker(nodeOf(leaving.hostname), ['swarm', 'leave', '--force']);
    d(['node', 'rm', '--force', leaving.id]);
    const want = [`${t!.instance}-agent-${workers[0]!.id.slice(0, 12)} 1/1`];
    // Within the 30 s of the periodic check: the watcher's node_left event reconciles at once.
    await waitFor(() => agents().join() === want.join(), { timeoutMs: 15_000, what: `only the agent of ${workers[0]!.hostname}, running (${agents().join(', ')})` });
  }, 90_000);

  it('svc uninstall removes the agents and their secret', async () => {
    await t!.daemon.stop();
    expect(agents()).toHaveLength(1);
    expect(lines(d(['secret', 'ls', '-q', '--filter', `label=svc.instance=${t!.instance}`]))).toHaveLength(1);
    const out = await uninstallInstance({ dataDir: t!.dataDir, instance: t!.instance, network: t!.network, dockerHost: cluster.manager.dockerHost });
    expect(out.join('\n')).toMatch(new RegExp(`removed Swarm service ${t!.instance}-agent-`));
    expect(out.join('\n')).toMatch(new RegExp(`removed Swarm secret ${t!.instance}-agent-`));
    expect(agents()).toEqual([]);
    expect(d(['secret', 'ls', '-q', '--filter', `label=svc.instance=${t!.instance}`])).toBe('');
  }, 90_000);
});
