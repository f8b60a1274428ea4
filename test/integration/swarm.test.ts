// SVC_RUNTIME=swarm in a real three-node Swarm (test/support/swarm-cluster.ts): replicas spread over the
// nodes, reached on the overlay through the probe helper, a node drained, a node's engine killed while
// serving; each replica comes back elsewhere through the port's `start` (svc heals, Swarm does not).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCluster, destroyCluster, type Cluster } from '../support/swarm-cluster.js';
import { createSwarmRuntime, type SwarmRuntime } from '../../src/runtime/swarm.js';
import { createHelperProbe } from '../../src/runtime/swarm-probe.js';
import { LABELS, type ContainerSpec } from '../../src/runtime/runtime.js';
import { ensureTestImages, WEB_OOM, WEB_PORT, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';
import { silentLogger } from '../../src/log.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let cluster: Cluster;
let rt: SwarmRuntime;
let image: string;
let oomImage: string;
let probe: (url: string, t: number) => Promise<number | undefined>;
const instance = 'swt';
const network = 'swt-net';

const spec = (deploy: number, slot: number, extra: Partial<ContainerSpec> = {}): ContainerSpec => ({
  name: `swt-web-${deploy}${slot ? `-r${slot}` : ''}`,
  image,
  network,
  init: true,
  labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance, [LABELS.app]: 'web', [LABELS.appId]: '1', [LABELS.deploy]: String(deploy), [LABELS.role]: 'app', 'svc.slot': String(slot) },
  ...extra,
});

/** Node id -> our replicas' names on it. */
const placement = async () => {
  const m = await rt.placements();
  return new Map([...m].map(([node, list]) => [node, list.map((s) => s.name).sort()]));
};
const nodeOf = async (name: string) => [...(await placement())].find(([, names]) => names.includes(name))?.[0];
const answers = async (name: string) => {
  const info = await rt.inspect(name, network);
  return info?.running && info.address ? (await probe(`http://${info.address}:${WEB_PORT}/health`, 2_000)) === 200 : false;
};
/** A task that runs answers once its httpd listens and the overlay knows its endpoint: wait for that, bounded. */
const serves = (name: string) => waitFor(() => answers(name), { timeoutMs: 10_000, what: `${name} to answer on the overlay` }).catch(() => false);

beforeAll(async () => {
  await ensureTestImages();
  cluster = await createCluster(3);
  image = cluster.pushImage(WEB_V1);
  oomImage = cluster.pushImage(WEB_OOM);
  rt = createSwarmRuntime({ dockerHost: cluster.manager.dockerHost, log: silentLogger, instance, watchIntervalMs: 200, registry: cluster.registry });
  probe = createHelperProbe({ runtime: rt, instance, network, image });
  await rt.ensureNetwork(network);
});

afterAll(() => destroyCluster(cluster));

describe('swarm runtime', () => {
  it('reports every node with its own host name, one manager', async () => {
    const nodes = await rt.nodes();
    expect(nodes).toHaveLength(3);
    expect(new Set(nodes.map((n) => n.hostname)).size).toBe(3);
    expect(nodes.filter((n) => n.role === 'manager')).toHaveLength(1);
    expect(nodes.every((n) => n.state === 'ready' && n.availability === 'active' && n.cpus > 0)).toBe(true);
    const join = await rt.joinInfo('worker');
    expect(join.token).toMatch(/^SWMTKN-/);
    expect(join.address).toBe(`${cluster.manager.address}:2377`);
  });

  it('spreads three replicas over three nodes, each reached on the overlay', async () => {
    for (let slot = 0; slot < 3; slot++) {
      const info = await rt.run(spec(1, slot));
      expect(info.running).toBe(true);
      expect(info.address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    }
    const p = await placement();
    expect(p.size).toBe(3);
    for (const names of p.values()) expect(names).toHaveLength(1);
    for (const name of ['swt-web-1', 'swt-web-1-r1', 'swt-web-1-r2']) expect(await serves(name)).toBe(true);
    // Listed like containers, by label, with their overlay addresses.
    const listed = await rt.list({ [LABELS.instance]: instance, [LABELS.app]: 'web' }, network);
    expect(listed.map((c) => c.name).sort()).toEqual(['swt-web-1', 'swt-web-1-r1', 'swt-web-1-r2']);
    expect(listed.every((c) => c.running && c.address)).toBe(true);
  });

  it('a drained node loses its replica; start brings it back on another node', async () => {
    const victim = 'swt-web-1-r1';
    const node = (await nodeOf(victim))!;
    await rt.updateNode(node, { availability: 'drain' });
    try {
      await waitFor(async () => !(await rt.inspect(victim, network))?.running, { timeoutMs: 20_000, what: 'the drained replica to stop' });
      await rt.start(victim);
      // Swarm schedules the new task after start() returns: wait for it to be placed.
      const now = await waitFor(() => nodeOf(victim), { timeoutMs: 20_000, what: 'the replica placed on a node' });
      expect(now).not.toBe(node);
      expect(await serves(victim)).toBe(true);
    } finally {
      await rt.updateNode(node, { availability: 'active' });
    }
  });

  it("a worker's engine killed: its replicas are reported down and started elsewhere while the others serve", async () => {
    const nodes = await rt.nodes();
    const p = await placement();
    const workerNode = nodes.find((n) => n.role === 'worker' && (p.get(n.id)?.length ?? 0) > 0)!;
    const victims = p.get(workerNode.id)!;
    const others = ['swt-web-1', 'swt-web-1-r1', 'swt-web-1-r2'].filter((n) => !victims.includes(n));
    const events: string[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      for await (const ev of rt.events(abort.signal)) if (victims.includes(ev.name) || ev.action.startsWith('node_')) events.push(`${ev.action} ${ev.name}`);
    })().catch(() => {});
    const clusterNode = cluster.nodes.find((n) => n.hostname === workerNode.hostname)!;
    await cluster.killNode(clusterNode);
    const t0 = Date.now();
    for (const v of victims) await waitFor(async () => !(await rt.inspect(v, network))?.running, { timeoutMs: 30_000, what: `${v} to be reported down` });
    const detectedMs = Date.now() - t0;
    for (const o of others) expect(await answers(o)).toBe(true);
    for (const v of victims) {
      await rt.start(v);
      expect(await nodeOf(v)).not.toBe(workerNode.id);
      expect(await serves(v)).toBe(true);
    }
    console.log(`node loss: ${victims.length} replica(s) reported down after ${detectedMs} ms, back elsewhere after ${Date.now() - t0} ms`);
    await waitFor(() => events.some((e) => e.startsWith('node_down')), { timeoutMs: 5_000, what: 'a node_down event' });
    for (const v of victims) expect(events).toContain(`die ${v}`);
    abort.abort();
    await watching;
  });

  it('stops, starts and removes a replica; limits reach the service', async () => {
    await rt.stop('swt-web-1-r2', 1);
    expect((await rt.inspect('swt-web-1-r2'))?.running).toBe(false);
    await rt.start('swt-web-1-r2');
    expect((await rt.inspect('swt-web-1-r2', network))?.running).toBe(true);
    const info = await rt.run(spec(2, 0, { resources: { memoryMb: 64, cpus: 0.5 } }));
    expect(info.running).toBe(true);
    const svc = (await rt.docker.getService('swt-web-2').inspect()) as { Spec: { TaskTemplate: { Resources: { Limits: { MemoryBytes: number; NanoCPUs: number } }; RestartPolicy: { Condition: string } }; EndpointSpec: { Mode: string } } };
    expect(svc.Spec.TaskTemplate.Resources.Limits).toEqual({ MemoryBytes: 64 * 1024 * 1024, NanoCPUs: 5e8 });
    expect(svc.Spec.TaskTemplate.RestartPolicy.Condition).toBe('none');
    expect(svc.Spec.EndpointSpec.Mode).toBe('dnsrr');
    for (const name of ['swt-web-1', 'swt-web-1-r1', 'swt-web-1-r2', 'swt-web-2']) await rt.remove(name);
    expect(await rt.list({ [LABELS.instance]: instance, [LABELS.role]: 'app' })).toEqual([]);
  });

  it('pins where the data is: a service on the manager or the node labelled svc.services=true (kept there when healed; the node prepared when named), an app with volumes on the manager', async () => {
    const nodes = await rt.nodes();
    const manager = nodes.find((n) => n.role === 'manager')!;
    const worker = nodes.find((n) => n.role === 'worker' && n.state === 'ready')!;
    const dir = await mkdtemp(join(tmpdir(), 'swt-pin-'));
    const mounts = [{ source: dir, target: '/data' }];
    const service = (name: string): ContainerSpec => ({ name, image, network, init: true, mounts, labels: { [LABELS.managed]: 'true', [LABELS.instance]: instance, [LABELS.role]: 'service', [LABELS.service]: name } });
    const made = ['swt-db1', 'swt-db2', 'swt-db3', 'swt-web-4', 'swt-web-4-r1'];
    try {
      expect((await rt.run(service('swt-db1'))).running).toBe(true);
      expect(await nodeOf('swt-db1')).toBe(manager.id);
      await rt.updateNode(worker.id, { labels: { 'svc.services': 'true' } });
      expect((await rt.run(service('swt-db2'))).running).toBe(true);
      expect(await nodeOf('swt-db2')).toBe(worker.id);
      // The disk the reconciler prepared decides, not the label read again (`dataNode`: here, the manager).
      expect((await rt.run({ ...service('swt-db3'), dataNode: 'here' })).running).toBe(true);
      expect(await nodeOf('swt-db3')).toBe(manager.id);
      // The label goes; a healed service stays with its data rather than start on an empty directory.
      await rt.updateNode(worker.id, { labels: {} });
      await rt.stop('swt-db2', 1);
      await rt.start('swt-db2');
      expect(await waitFor(() => nodeOf('swt-db2'), { timeoutMs: 20_000, what: 'swt-db2 placed' })).toBe(worker.id);
      // Two replicas of an app with volumes: both on the manager, no spread.
      for (const slot of [0, 1]) expect((await rt.run(spec(4, slot, { mounts }))).running).toBe(true);
      expect([await nodeOf('swt-web-4'), await nodeOf('swt-web-4-r1')]).toEqual([manager.id, manager.id]);
    } finally {
      for (const name of made) await rt.remove(name).catch(() => {});
      await rt.updateNode(worker.id, { labels: {} }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an OOM kill: OOMKilled for a task on the manager, suspected (exit 137 under its limit) on a worker', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'swt-oom-'));
    const oom = (slot: number, extra: Partial<ContainerSpec>) => spec(5, slot, { image: oomImage, env: { ALLOC_MB: '256' }, resources: { memoryMb: 16 }, ...extra });
    try {
      // The mount pins slot 0 to the manager; slot 1 is spread away from it, to the worker left.
      await rt.run(oom(0, { mounts: [{ source: dir, target: '/data' }] }));
      await rt.run(oom(1, {}));
      const ended = async (name: string) => waitFor(async () => {
        const info = await rt.inspect(name, network);
        return info?.state === 'exited' ? info : undefined;
      }, { timeoutMs: 30_000, what: `${name} killed` });
      const onManager = await ended('swt-web-5');
      expect(onManager).toMatchObject({ exitCode: 137, oomKilled: true });
      expect(onManager.oomLikely).toBeUndefined();
      const onWorker = await ended('swt-web-5-r1');
      expect(onWorker).toMatchObject({ exitCode: 137, oomLikely: true });
      expect(onWorker.oomKilled).toBeUndefined();
      // The worker's replica has its logs: Swarm's service logs reach the node it ran on.
      const lines: string[] = [];
      for await (const l of rt.logs('swt-web-5-r1', { follow: false })) lines.push(l.line);
      expect(lines.join('\n')).toContain('svc-test web oom: allocating 256 MB');
    } finally {
      for (const name of ['swt-web-5', 'swt-web-5-r1']) await rt.remove(name).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a private image: the credentials svc holds go with the service, so the workers pull it too', async () => {
    const ref = cluster.pushPrivateImage(WEB_V1);
    const p = cluster.privateRegistry;
    const asked: string[] = [];
    const withAuth = createSwarmRuntime({
      dockerHost: cluster.manager.dockerHost, log: silentLogger, instance, watchIntervalMs: 200, registry: cluster.registry,
      registryAuth: (img) => {
        asked.push(img);
        return img.startsWith(`${p.address}/`) ? { serveraddress: p.address, username: p.username, password: p.password } : undefined;
      },
    });
    const names = [0, 1, 2].map((slot) => spec(4, slot, { image: ref }).name);
    try {
      for (let slot = 0; slot < 3; slot++) expect((await withAuth.run(spec(4, slot, { image: ref }))).running).toBe(true);
      expect(asked).toContain(ref);
      // Spread one per node: two ran on workers, which never had the image and pulled it with the login.
      const nodes = await rt.nodes();
      const onWorkers = (await Promise.all(names.map(nodeOf))).filter((id) => nodes.find((x) => x.id === id)?.role === 'worker');
      expect(onWorkers.length).toBeGreaterThan(0);
      for (const n of names) expect(await serves(n)).toBe(true);
    } finally {
      for (const n of names) await rt.remove(n);
    }
  });

  it('a built image is pushed to the registry and runs on the workers too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'swt-build-'));
    try {
      await writeFile(join(dir, 'Dockerfile'), `FROM ${image}\nCOPY built.html /www/built.html\n`);
      await writeFile(join(dir, 'built.html'), 'built by svc\n');
      const log: string[] = [];
      await rt.build(dir, 'svc-build/web:abc123', (l) => log.push(l));
      expect(log).toContain(`pushed ${cluster.registry}/svc-build/web:abc123`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const names = [0, 1].map((slot) => spec(3, slot, { image: 'svc-build/web:abc123' }).name);
    for (let slot = 0; slot < 2; slot++) expect((await rt.run(spec(3, slot, { image: 'svc-build/web:abc123' }))).running).toBe(true);
    const nodes = await rt.nodes();
    const onWorker = (await Promise.all(names.map(async (n) => [n, await nodeOf(n)] as const))).filter(([, id]) => nodes.find((x) => x.id === id)?.role === 'worker');
    expect(onWorker.length).toBeGreaterThan(0);
    for (const n of names) {
      const info = await rt.inspect(n, network);
      expect(await probe(`http://${info!.address}:${WEB_PORT}/built.html`, 2_000)).toBe(200);
      await rt.remove(n);
    }
  });
});
