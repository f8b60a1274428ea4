// The Docker adapter against the real engine: network, run, inspect, HTTP by container address, exec,
// logs, events, stop/remove tolerance, pull/build failures. Everything it creates carries this run's
// instance label and is removed in afterAll, whatever happened.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS, type ContainerSpec, type RuntimeEvent } from '../../src/runtime/runtime.js';
import { silentLogger } from '../../src/log.js';
import { ensureTestImages, WEB_CRASH, WEB_ENV, WEB_OOM, WEB_PORT, WEB_UNHEALTHY, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';
import { readFile } from 'node:fs/promises';
import { BRIDGE_RETRANS_MS, bridgeInterface } from '../../src/runtime/bridge-neighbours.js';
import { stoppedByEngineApi } from '../../src/reconcilers/app/watch-plan.js';

const runtime = createDockerRuntime({ log: silentLogger });
const INSTANCE = `test-rt-${process.pid}`;
const NET = 'svc-test-net';
const RACE_NET = `svc-test-net-race-${process.pid}`;
const ours = { [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE };
const tempDirs: string[] = [];
let createdNet = false;
let n = 0;

const spec = (image: string, extra: Partial<ContainerSpec> = {}): ContainerSpec => ({
  name: `svc-test-rt-${process.pid}-${++n}`,
  image,
  labels: { ...ours, [LABELS.app]: 'rt' },
  network: NET,
  networkAliases: [`rt-${n}`],
  ...extra,
});

const get = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  return { status: res.status, body: await res.text() };
};

beforeAll(async () => {
  await ensureTestImages(runtime);
  createdNet = !(await runtime.docker.listNetworks({ filters: { name: [NET] } })).some((x) => x.Name === NET);
  await runtime.ensureNetwork(NET);
});

afterAll(async () => {
  for (const c of await runtime.list({ [LABELS.instance]: INSTANCE }).catch(() => [])) await runtime.remove(c.id).catch(() => {});
  const nets = await runtime.docker.listNetworks().catch(() => []);
  for (const net of nets.filter((x) => x.Name === RACE_NET || (createdNet && x.Name === NET))) {
    await runtime.docker.getNetwork(net.Id).remove().catch(() => {}); // another suite may still use svc-test-net
  }
  for (const d of tempDirs) await rm(d, { recursive: true, force: true });
});

describe('docker runtime', () => {
  it('answers ping and creates a network once even when two callers race', async () => {
    expect(await runtime.ping()).toBe(true);
    // Separate adapters stand for separate processes; each also races with itself.
    const others = [1, 2].map(() => createDockerRuntime({ log: silentLogger }));
    await Promise.all([runtime, ...others, runtime].map((r) => r.ensureNetwork(RACE_NET)));
    await runtime.ensureNetwork(RACE_NET);
    const nets = await runtime.docker.listNetworks({ filters: { name: [RACE_NET] } });
    expect(nets.filter((x) => x.Name === RACE_NET)).toHaveLength(1);
  });

  it('runs a labelled container, serves by its address, execs, logs, dies, and is removed', async () => {
    const s = spec(WEB_V1);
    const abort = new AbortController();
    const events: RuntimeEvent[] = [];
    let connected!: () => void;
    const subscribed = new Promise<void>((r) => (connected = r));
    const watching = (async () => {
      for await (const ev of runtime.events(abort.signal, { onConnected: connected })) if (ev.name === s.name) events.push(ev);
    })();
    try {
      await subscribed;
      const started = await runtime.run(s);
      expect(started).toMatchObject({ name: s.name, image: WEB_V1, running: true, state: 'running', health: 'none' });
      expect(started.labels).toMatchObject(ours);
      expect(started.address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

      const listed = await runtime.list(ours, NET);
      expect(listed.map((c) => [c.name, c.address])).toEqual([[s.name, started.address]]);

      const page = await waitFor(() => get(`http://${started.address}:${WEB_PORT}/`), { timeoutMs: 10_000, what: 'v1 page' });
      expect(page.status).toBe(200);
      expect(page.body).toContain('svc-test web v1');

      const ex = await runtime.exec(s.name, ['sh', '-c', 'echo out-$FOO; echo err >&2; exit 3'], { env: { FOO: 'bar' } });
      expect(ex).toEqual({ exitCode: 3, stdout: 'out-bar\n', stderr: 'err\n' });

      const logAbort = new AbortController();
      let seen: string | undefined;
      for await (const l of runtime.logs(s.name, { follow: true, signal: logAbort.signal })) {
        if (l.line.includes('starting on port')) {
          seen = l.line;
          expect(l.stream).toBe('stdout');
          expect(Date.parse(l.time)).toBeGreaterThan(0);
          logAbort.abort();
        }
      }
      expect(seen).toBe('svc-test web v1 starting on port 3000');

      await runtime.stop(s.name, 0);
      await waitFor(() => events.some((e) => e.action === 'die'), { timeoutMs: 10_000, what: 'die event' });
      const die = events.find((e) => e.action === 'die')!;
      expect(die.labels).toMatchObject(ours);
      expect(die.id).toBe(started.id);
      const dead = await runtime.inspect(s.name, NET);
      expect(dead).toMatchObject({ running: false, state: 'exited', address: undefined });
      expect(dead!.exitCode).not.toBe(0);

      await runtime.stop(s.name, 0); // already stopped
      await runtime.remove(s.name);
      await runtime.remove(s.name); // already gone
      await runtime.stop(s.name, 0); // missing
      expect(await runtime.inspect(s.name)).toBeUndefined();
      expect(await runtime.list(ours)).toEqual([]);
      await waitFor(() => events.some((e) => e.action === 'destroy'), { timeoutMs: 10_000, what: 'destroy event' });
    } finally {
      abort.abort();
      await watching;
    }
  });

  it('reports a container that exits at once, and an unhealthy one answers 500', async () => {
    const crash = await runtime.run(spec(WEB_CRASH));
    const exited = await waitFor(async () => {
      const i = await runtime.inspect(crash.name, NET);
      return i && !i.running ? i : undefined;
    }, { what: 'crash image to exit' });
    expect(exited).toMatchObject({ state: 'exited', exitCode: 1, address: undefined });
    const lines: string[] = [];
    for await (const l of runtime.logs(crash.name, { follow: false })) lines.push(`${l.stream}:${l.line}`);
    expect(lines).toEqual(['stderr:svc-test web crash: exiting with 1']);
    const followed: string[] = [];
    for await (const l of runtime.logs(crash.name, { follow: true, tail: 10 })) followed.push(l.line); // ends: stopped
    expect(followed).toEqual(['svc-test web crash: exiting with 1']);

    const sick = await runtime.run(spec(WEB_UNHEALTHY));
    const res = await waitFor(() => get(`http://${sick.address}:${WEB_PORT}/`), { what: 'unhealthy answer' });
    expect(res.status).toBe(500);
  });

  it('limits reach the engine; a container over its memory cap is reported OOMKilled, a docker kill is not', async () => {
    const web = await runtime.run(spec(WEB_V1, { resources: { memoryMb: 32, cpus: 0.5 } }));
    const host = (await runtime.docker.getContainer(web.id).inspect()).HostConfig;
    expect(host).toMatchObject({ Memory: 32 * 1024 * 1024, MemorySwap: 32 * 1024 * 1024, NanoCpus: 500_000_000 });
    expect((await waitFor(() => get(`http://${web.address}:${WEB_PORT}/`), { what: 'limited web answer' })).status).toBe(200);
    await runtime.docker.getContainer(web.id).kill();
    const killed = await waitFor(async () => {
      const i = await runtime.inspect(web.name, NET);
      return i && !i.running ? i : undefined;
    }, { what: 'killed container to stop' });
    expect(killed).toMatchObject({ exitCode: 137, oomKilled: undefined });

    const unlimited = (await runtime.docker.getContainer((await runtime.run(spec(WEB_V1))).id).inspect()).HostConfig;
    expect(unlimited).toMatchObject({ Memory: 0, NanoCpus: 0 });

    const hog = await runtime.run(spec(WEB_OOM, { env: { ALLOC_MB: '64' }, resources: { memoryMb: 16 } }));
    const oom = await waitFor(async () => {
      const i = await runtime.inspect(hog.name, NET);
      return i && !i.running ? i : undefined;
    }, { what: 'oom image to be killed' });
    expect(oom).toMatchObject({ state: 'exited', exitCode: 137, oomKilled: true });
    const lines: string[] = [];
    for await (const l of runtime.logs(hog.name, { follow: false })) lines.push(l.line);
    expect(lines).toEqual(['svc-test web oom: allocating 64 MB']);
  });

  it('pastActions: the engine\'s history tells docker kill and docker stop from an exit of its own', async () => {
    const stopped = async (name: string) =>
      waitFor(async () => {
        const i = await runtime.inspect(name, NET);
        return i && !i.running ? i : undefined;
      }, { what: `${name} to stop` });
    const since = (startedAt: string | undefined) => Date.parse(startedAt!) - 1_000;

    const killed = await runtime.run(spec(WEB_V1));
    await runtime.docker.getContainer(killed.id).kill();
    const k = await stopped(killed.name);
    const killActions = await runtime.pastActions(k.id, since(k.startedAt));
    expect(killActions).toEqual(expect.arrayContaining(['start', 'kill', 'die']));
    expect(stoppedByEngineApi(killActions)).toBe(true);

    const stoppedByApi = await runtime.run(spec(WEB_V1));
    await runtime.stop(stoppedByApi.name, 1);
    const s = await stopped(stoppedByApi.name);
    expect(stoppedByEngineApi(await runtime.pastActions(s.id, since(s.startedAt)))).toBe(true);

    const crash = await runtime.run(spec(WEB_CRASH));
    const c = await stopped(crash.name);
    const crashActions = await runtime.pastActions(c.id, since(c.startedAt));
    expect(crashActions).toContain('die');
    expect(stoppedByEngineApi(crashActions)).toBe(false);
  });

  it('injects environment variables (web:env serves them)', async () => {
    const c = await runtime.run(spec(WEB_ENV, { env: { SVC_TEST_GREETING: 'hello world', DATABASE_URL: 'postgres://x' } }));
    const res = await waitFor(() => get(`http://${c.address}:${WEB_PORT}/cgi-bin/env`), { what: 'env page' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('SVC_TEST_GREETING=hello world');
    expect(res.body).toContain('DATABASE_URL=postgres://x');
  });

  it('translates engine errors and knows which images it has', async () => {
    expect(await runtime.inspect('svc-test-no-such-container')).toBeUndefined();
    await expect(runtime.start('svc-test-no-such-container')).rejects.toThrow(/No such container/i);
    await expect(runtime.run(spec('svc-test/no-such-image:v0'))).rejects.toThrow(/No such image/i);
    const s = spec(WEB_V1);
    await runtime.run(s);
    await expect(runtime.run({ ...s })).rejects.toThrow(/already in use/);
    const bad = spec(WEB_V1, { cmd: ['/bin/no-such-binary'] });
    await expect(runtime.run(bad)).rejects.toThrow(/docker start .*no such file/i);
    expect(await runtime.inspect(bad.name)).toBeUndefined(); // not left half-made
    expect(await runtime.hasImage(WEB_V1)).toBe(true);
    expect(await runtime.hasImage('svc-test/no-such-image:v0')).toBe(false);
    await expect(runtime.pull('127.0.0.1:1/svc-test/nothing:v0')).rejects.toThrow(/docker pull 127\.0\.0\.1:1\/svc-test\/nothing:v0: .+/);
  });

  it('reports the image id a container was made from, and runs that id after its tag moved (a rollback pin)', async () => {
    const moving = `svc-test/pin-${process.pid}`;
    const idOf = async (ref: string) => ((await runtime.docker.getImage(ref).inspect()) as { Id: string }).Id;
    try {
      await runtime.docker.getImage(WEB_V1).tag({ repo: moving, tag: 'latest' });
      const first = await runtime.run(spec(`${moving}:latest`));
      expect(first.imagePin).toBe(await idOf(WEB_V1));
      await runtime.docker.getImage(WEB_V2).tag({ repo: moving, tag: 'latest' }); // the tag moves
      expect(await runtime.hasImage(first.imagePin!)).toBe(true);
      const again = await runtime.run(spec(first.imagePin!));
      expect(again).toMatchObject({ running: true, imagePin: first.imagePin });
      const res = await waitFor(() => get(`http://${again.address}:${WEB_PORT}/`), { what: 'the pinned image serving' });
      expect(res.body).toContain('v1');
    } finally {
      await runtime.removeImage(`${moving}:latest`);
    }
  });

  it('builds from a directory, streams its log, and rejects on a failing step', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-test-build-'));
    tempDirs.push(dir);
    await writeFile(join(dir, 'Dockerfile'), 'FROM svc-test/web:v1\nRUN ["/bin/sh", "-c", "echo building-step; exit 7"]\n');
    const lines: string[] = [];
    const err = await runtime.build(dir, `svc-test/broken:${process.pid}`, (l) => lines.push(l)).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/returned a non-zero code: 7/);
    expect(lines.some((l) => l.includes('building-step'))).toBe(true);
    expect(await runtime.hasImage(`svc-test/broken:${process.pid}`)).toBe(false);
  });
});

describe('ownership (DESIGN.md rule 14)', () => {
  it('never stops or removes a container of the same name without this instance label; removes its own', async () => {
    const scoped = createDockerRuntime({ log: silentLogger, instance: INSTANCE });
    const foreign = [
      spec(WEB_V1, { labels: { [LABELS.managed]: 'true', [LABELS.instance]: 'someone-else' } }),
      spec(WEB_V1, { labels: {} }),
    ];
    try {
      for (const s of foreign) await runtime.run(s);
      for (const s of foreign) {
        await expect(scoped.remove(s.name)).rejects.toThrow(/not this svc instance's/);
        await expect(scoped.stop(s.name, 1)).rejects.toThrow(/not this svc instance's/);
        expect((await runtime.inspect(s.name))?.running).toBe(true);
      }
      // An adopted app's container is the one exception to the stop (never to the removal).
      await scoped.stop(foreign[1]!.name, 1, { adopted: true });
      expect((await runtime.inspect(foreign[1]!.name))?.running).toBe(false);

      const own = spec(WEB_V1);
      await scoped.run(own);
      await scoped.stop(own.name, 1);
      await scoped.remove(own.name);
      expect(await runtime.inspect(own.name)).toBeUndefined();
      await scoped.remove(own.name); // missing: not an error
    } finally {
      for (const s of foreign) await runtime.remove(s.name).catch(() => {});
    }
  });

  it('a network removed behind its back is made again at the next run; one remade by someone else is tuned', async () => {
    const scoped = createDockerRuntime({ log: silentLogger, instance: INSTANCE });
    const name = `svc-test-net-gone-${process.pid}`;
    const netsNamed = async () => (await runtime.docker.listNetworks({ filters: { name: [name] } })).filter((x) => x.Name === name);
    const retrans = async (id: string) => {
      const ifname = bridgeInterface({ Id: id, Driver: 'bridge' })!;
      return Number((await readFile(`/proc/sys/net/ipv4/neigh/${ifname}/retrans_time_ms`, 'utf8')).trim());
    };
    const made: string[] = [];
    try {
      await scoped.ensureNetwork(name); // remembered: the next ensure asks the engine nothing
      for (const net of await netsNamed()) await runtime.docker.getNetwork(net.Id).remove();
      const first = spec(WEB_V1, { network: name, networkAliases: undefined });
      made.push(first.name);
      await scoped.ensureNetwork(name);
      const a = await scoped.run(first); // the start says "network not found": made again, then run once more
      expect(a.running).toBe(true);
      expect(a.address).toBeTruthy();
      const again = await netsNamed();
      expect(again).toHaveLength(1);
      expect(again[0]!.Labels).toMatchObject({ [LABELS.instance]: INSTANCE });
      await scoped.remove(first.name);

      // Removed and created again by hand (untuned bridge): the next container on it has the new bridge tuned.
      await runtime.docker.getNetwork(again[0]!.Id).remove();
      const byHand = await runtime.docker.createNetwork({ Name: name, Driver: 'bridge' });
      if (process.getuid?.() === 0) expect(await retrans(byHand.id)).not.toBe(BRIDGE_RETRANS_MS);
      const second = spec(WEB_V1, { network: name, networkAliases: undefined });
      made.push(second.name);
      expect((await scoped.run(second)).address).toBeTruthy();
      if (process.getuid?.() === 0) expect(await retrans(byHand.id)).toBe(BRIDGE_RETRANS_MS);
    } finally {
      for (const c of made) await scoped.remove(c).catch(() => {});
      for (const net of await netsNamed()) await runtime.docker.getNetwork(net.Id).remove().catch(() => {});
    }
  });

  it('labels the network it creates with the instance', async () => {
    const scoped = createDockerRuntime({ log: silentLogger, instance: INSTANCE });
    const name = `svc-test-net-own-${process.pid}`;
    try {
      await scoped.ensureNetwork(name);
      const nets = await runtime.docker.listNetworks({ filters: { name: [name] } });
      expect(nets.find((x) => x.Name === name)?.Labels).toMatchObject({ [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE });
    } finally {
      for (const net of (await runtime.docker.listNetworks({ filters: { name: [name] } })).filter((x) => x.Name === name)) await runtime.docker.getNetwork(net.Id).remove().catch(() => {});
    }
  });
});
