// Replicas and limits on one host (issue 19) through the app reconciler on the FakeRuntime, a real
// :memory: SQLite and a fake clock. Every test ends steady (rule 2).
import { describe, it, expect } from 'vitest';
import { eq } from 'drizzle-orm';
import { AppHarness, APP_SETTINGS } from '../../support/app-harness.js';
import { apps, appEvents } from '../../../src/store/schema/index.js';
import { readInstances } from '../../../src/observed/apps.js';
import { updateApp } from '../../support/commands.js';

const running = (h: AppHarness) => [...h.rt.containers.values()].filter((c) => c.state === 'running').map((c) => c.spec.name).sort();
const answer = (h: AppHarness) => {
  const r = h.dnsNow()?.['web.svc.internal.'];
  return r === undefined ? [] : typeof r === 'string' ? [r] : [...r];
};
const addressesOf = (h: AppHarness, names: string[]) => names.map((n) => h.rt.containers.get(n)!.address!).sort();
const scale = (h: AppHarness, replicas: number) => updateApp(h.db, h.enqueue, h.app().id, { replicas });
const events = (h: AppHarness) => h.db.select().from(appEvents).all().map((e) => e.message);

async function threeReplicas() {
  const h = new AppHarness();
  h.makeApp('web', { replicas: 3, memoryMb: 128, cpus: 0.5 });
  await h.deployed('web:1');
  await h.drive();
  return h;
}

describe('replicas', () => {
  it('a deploy starts every replica with the limits, and the DNS answer holds all three', async () => {
    const h = await threeReplicas();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    for (const c of h.rt.containers.values()) expect(c.spec.resources).toEqual({ memoryMb: 128, cpus: 0.5 });
    expect(readInstances(h.db, h.app().id).map((r) => [r.slot, r.deployId])).toEqual([[1, 1], [2, 1]]);
    expect(h.app().status).toBe('active');
    await h.expectSteady();
  });

  it('a deploy starts the first replica, then the others together (their engine starts overlap)', async () => {
    const h = new AppHarness();
    h.makeApp('web', { replicas: 3 });
    const run = h.rt.run.bind(h.rt);
    let inFlight = 0;
    const overlap: [string, number][] = [];
    h.rt.run = async (spec) => {
      inFlight++;
      overlap.push([spec.name, inFlight]);
      await new Promise((r) => setImmediate(r)); // the engine's create + start take a while
      try {
        return await run(spec);
      } finally {
        inFlight--;
      }
    };
    await h.deployed('web:1');
    expect(overlap).toEqual([['svc-web-1', 1], ['svc-web-1-r1', 1], ['svc-web-1-r2', 2]]);
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    await h.expectSteady();
  });

  it('a replica whose start fails: the step waits for the others before it fails the deploy, and nothing of it stays', async () => {
    const h = new AppHarness();
    h.makeApp('web', { replicas: 3 });
    const run = h.rt.run.bind(h.rt);
    let settled = 0;
    h.rt.run = async (spec) => {
      await new Promise((r) => setImmediate(r));
      if (spec.name === 'svc-web-1-r1') throw new Error('docker start svc-web-1-r1: no space left on device');
      const info = await run(spec);
      settled++;
      return info;
    };
    const d = h.deploy('web:1');
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'failed' });
    expect(settled).toBe(2); // r2 had started when the step failed, not after
    expect(h.dep(d.id).error).toMatch(/no space left on device/);
    await h.drive();
    expect(running(h)).toEqual([]);
    await h.expectSteady();
  });

  it('a new version: all replicas healthy beside the old before the switch, then the old ones go', async () => {
    const h = await threeReplicas();
    const d = h.deploy('web:2');
    let atSwitch: string[] = [];
    // The pass that switches runs on from the health check (0045): just after it, before the drain stops the old.
    await h.drive(undefined, { until: () => (h.dep(d.id).step === 'finalize' && (atSwitch = running(h)).length > 0 && false) || h.dep(d.id).status === 'success' });
    expect(atSwitch).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2', 'svc-web-2', 'svc-web-2-r1', 'svc-web-2-r2']);
    await h.drive();
    expect(running(h)).toEqual(['svc-web-2', 'svc-web-2-r1', 'svc-web-2-r2']);
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    await h.expectSteady();
  });

  it('after the drain, the old version\'s replicas are stopped together (each stop waits for its exit)', async () => {
    const h = await threeReplicas();
    const stop = h.rt.stop.bind(h.rt);
    let inFlight = 0;
    let most = 0;
    const stopped: string[] = [];
    h.rt.stop = async (name, grace, o) => {
      most = Math.max(most, ++inFlight);
      stopped.push(name);
      await new Promise((r) => setImmediate(r)); // SIGTERM, then the wait for the exit
      try {
        return await stop(name, grace, o);
      } finally {
        inFlight--;
      }
    };
    const d = h.deploy('web:2');
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'success' && h.dep(d.id).drainUntil === null });
    expect(stopped.sort()).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(most).toBe(3);
    await h.drive();
    expect(running(h)).toEqual(['svc-web-2', 'svc-web-2-r1', 'svc-web-2-r2']);
    await h.expectSteady();
  });

  it('the old version drains on every replica: one with a request in flight holds the stop of all', async () => {
    const h = await threeReplicas();
    const r2 = `${h.rt.containers.get('svc-web-1-r2')!.address!}:3000`;
    const cutAt = () => h.dnsCalls.find((c) => (c.records['web.svc.internal.'] ?? []).length === 3 && !c.records['web.svc.internal.']!.includes(r2.split(':')[0]))?.at;
    // A request in flight on the old third replica until 2 s after the switch.
    h.upstream = () => {
      const cut = cutAt();
      return new Map([[r2, cut !== undefined && h.now < cut + 2_000 ? 1 : 0]]);
    };
    const d = h.deploy('web:2');
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'success' && h.dep(d.id).drainUntil === null });
    const cut = cutAt()!;
    const stops = h.timed.filter((t) => t.method === 'stop' && t.name.startsWith('svc-web-1'));
    expect(stops.map((t) => t.name).sort()).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    for (const s of stops) expect(s.at - cut).toBeGreaterThanOrEqual(2_000);
    await h.drive();
    await h.expectSteady();
  });

  it('one replica that never gets healthy fails them all: none is switched to, the old three keep serving', async () => {
    const h = await threeReplicas();
    const before = answer(h);
    // The new version's replicas exit at once: the first that fails fails the deploy, all are removed.
    const d = h.deploy('web:exits');
    await h.drive(undefined, { until: () => ['auto_rollback', 'failed'].includes(h.dep(d.id).status) });
    await h.drive();
    expect(h.dep(d.id).status).toBe('auto_rollback');
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(answer(h)).toEqual(before);
    await h.expectSteady();
  });

  it('scaling adds and removes replicas of the live version, no deploy; a removed one leaves the answer first', async () => {
    const h = new AppHarness();
    await h.deployed('web:1');
    await h.drive();
    scale(h, 3);
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(answer(h)).toHaveLength(3);
    expect(h.db.select().from(apps).all()).toHaveLength(1);
    await h.expectSteady();
    scale(h, 1);
    const r2 = h.rt.containers.get('svc-web-1-r2')!.address!;
    await h.rec.reconcile('web');
    // Out of the answer, still running until the proxy re-resolved.
    expect(answer(h)).toHaveLength(1);
    expect(answer(h)).not.toContain(r2);
    expect(running(h)).toContain('svc-web-1-r2');
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1']);
    expect(readInstances(h.db, h.app().id)).toEqual([]);
    await h.expectSteady();
  });

  it('replicas 0 stops the app (inactive, no DNS answer) without deleting it; raising it starts it again', async () => {
    const h = await threeReplicas();
    scale(h, 0);
    await h.drive();
    expect(running(h)).toEqual([]);
    expect(answer(h)).toEqual([]);
    expect(h.app().status).toBe('inactive');
    expect(h.app().currentDeployId).toBe(1);
    await h.expectSteady();
    scale(h, 2);
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1']);
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    expect(h.app().status).toBe('active');
    await h.expectSteady();
  });

  it('raised from 0: the pass that starts the first replica writes active, before the other replicas are made', async () => {
    // On a Swarm each replica's start waits for its task to run (seconds): the status must not stay
    // `inactive` until a later pass while the first replica already serves (issue 19, status after a scale-up).
    const h = await threeReplicas();
    scale(h, 0);
    await h.drive();
    expect(h.app().status).toBe('inactive');
    scale(h, 3);
    let atFirstReplica: string | undefined;
    const run = h.rt.run.bind(h.rt);
    h.rt.run = async (spec) => {
      // What the API answers while the second replica is being started (same pass as the first's start).
      if (spec.name === 'svc-web-1-r1') atFirstReplica = h.app().status;
      return run(spec);
    };
    await h.rec.reconcile('web');
    expect(running(h)).toContain('svc-web-1');
    expect(atFirstReplica).toBe('active');
    expect(h.app().status).toBe('active');
    h.rt.run = run;
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(h.app().status).toBe('active');
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });

  it('a replica killed is healed alone with backoff; one killed for memory says OOMKilled', async () => {
    const h = await threeReplicas();
    h.rt.kill('svc-web-1-r1');
    await h.rec.reconcile('web');
    expect(running(h)).toContain('svc-web-1-r1');
    h.rt.oom('svc-web-1-r2');
    await h.drive();
    expect(events(h).some((m) => /replica 2 \(svc-web-1-r2\) was killed for memory \(OOMKilled\); restarted/.test(m))).toBe(true);
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    // Up long enough: the counters reset, then nothing changes any more.
    h.now += 11_000;
    await h.drive();
    expect(readInstances(h.db, h.app().id).every((r) => r.healFailures === 0)).toBe(true);
    await h.expectSteady();
  });

  /** The DNS answer at each `start` the reconciler asks of the engine (the fake's own method, wrapped). */
  function answersAtStart(h: AppHarness): string[][] {
    const seen: string[][] = [];
    const start = h.rt.start.bind(h.rt);
    h.rt.start = async (name: string) => {
      seen.push(answer(h));
      return start(name);
    };
    return seen;
  }

  it('a killed replica leaves the DNS answer before the engine starts it again, and joins after its probe', async () => {
    const h = await threeReplicas();
    const dead = h.rt.containers.get('svc-web-1-r1')!.address!;
    const seen = answersAtStart(h);
    h.rt.kill('svc-web-1-r1');
    await h.rec.reconcile('web');
    // The start takes the engine hundreds of ms: the proxy must not pick the dead address meanwhile.
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toContain(dead);
    expect(answer(h)).toHaveLength(2);
    await h.drive();
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    expect(answer(h)).toHaveLength(3);
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });

  it('the first replica killed beside others leaves the answer before its restart and joins again only after its health check', async () => {
    const h = await threeReplicas();
    const dead = h.rt.containers.get('svc-web-1')!.address!;
    const seen = answersAtStart(h);
    h.rt.kill('svc-web-1');
    h.probed.length = 0;
    await h.rec.reconcile('web');
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toContain(dead);
    expect(running(h)).toContain('svc-web-1');
    // Started, not yet probed: still out of the answer (it may not listen yet).
    expect(answer(h)).not.toContain(dead);
    expect(answer(h)).toHaveLength(2);
    await h.drive();
    expect(h.probed.some((u) => u.includes(`//${dead}:`))).toBe(true);
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    expect(answer(h)).toHaveLength(3);
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });

  it('the first replica waiting out its heal backoff beside serving replicas leaves the app active', async () => {
    const h = await threeReplicas();
    // Killed again right after each restart: the heal backoff holds it down for a while.
    for (let i = 0; i < 3 && running(h).includes('svc-web-1'); i++) {
      h.rt.kill('svc-web-1');
      await h.rec.reconcile('web');
    }
    expect(running(h)).not.toContain('svc-web-1');
    expect(answer(h)).toHaveLength(2);
    // Two replicas answer: the app serves, so it is active, not inactive.
    expect(h.app().status).toBe('active');
    h.now += 60_000;
    await h.drive();
    expect(answer(h)).toHaveLength(3);
    expect(h.app().status).toBe('active');
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });

  it('a replica sent a stopping signal leaves the answer at the kill event, before it dies; its death restarts it', async () => {
    const h = await threeReplicas();
    for (const name of ['svc-web-1-r2', 'svc-web-1']) {
      const dying = h.rt.containers.get(name)!.address!;
      h.kills.note({ action: 'kill', id: name, name, labels: { 'svc.app': 'web' }, signal: '9', atMs: h.now });
      await h.rec.reconcile('web');
      // Still running (the engine tears its network down before `die`), already out of the answer.
      expect(running(h)).toContain(name);
      expect(answer(h)).not.toContain(dying);
      expect(answer(h)).toHaveLength(2);
      h.now += 50;
      h.rt.kill(name);
      await h.drive();
      expect(answer(h)).toEqual(addressesOf(h, running(h)));
      expect(answer(h)).toHaveLength(3);
    }
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });

  it('the first replica alone leaves the answer while it is restarted and joins after its probe (a failed dial marks its address down in Caddy for 2 s)', async () => {
    const h = new AppHarness();
    await h.deployed('web:1');
    await h.drive();
    const addr = h.rt.containers.get('svc-web-1')!.address!;
    const seen = answersAtStart(h);
    h.rt.kill('svc-web-1');
    expect(await h.rec.reconcile('web')).toEqual({ requeueAfterMs: 0 }); // the probe comes at once
    expect(seen).toEqual([[]]);
    expect(answer(h)).toEqual([]);
    await h.rec.reconcile('web');
    expect(answer(h)).toEqual([addr]);
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });

  it('the first replica alone leaves the answer at its kill event before the engine is asked anything; survived, it joins after its probe', async () => {
    const h = new AppHarness();
    await h.deployed('web:1');
    await h.drive();
    const addr = h.rt.containers.get('svc-web-1')!.address!;
    h.kills.note({ action: 'kill', id: 'svc-web-1', name: 'svc-web-1', labels: { 'svc.app': 'web' }, signal: '15', atMs: h.now });
    let answerAtList: string[] | undefined;
    const list = h.rt.list.bind(h.rt);
    h.rt.list = async (...args: Parameters<typeof list>) => {
      answerAtList ??= answer(h);
      return list(...args);
    };
    await h.rec.reconcile('web');
    expect(answerAtList).toEqual([]); // out before the first engine call (an inspect of a dying container waits for its exit)
    expect(h.app().liveAddress).toBeNull();
    // It handled the TERM and runs on: its probe passes and it is back.
    h.now += 16_000;
    await h.drive();
    expect(answer(h)).toEqual([addr]);
    await h.expectSteady();
  });

  it('the first replica killed for memory is an app event that says so', async () => {
    const h = new AppHarness();
    await h.deployed('web:1');
    await h.drive();
    h.rt.oom('svc-web-1');
    await h.drive();
    expect(events(h).some((m) => /svc-web-1 was killed for memory \(OOMKilled\); restarted/.test(m))).toBe(true);
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
    expect(h.db.select().from(apps).where(eq(apps.name, 'web')).get()!.replicas).toBe(1);
  });

  it('a Swarm task on a worker killed at its memory limit: the event says most likely for memory, not OOMKilled', async () => {
    const h = await threeReplicas();
    h.rt.oomOnWorker('svc-web-1-r1');
    await h.drive();
    expect(events(h).some((m) => /replica 1 \(svc-web-1-r1\) was killed \(exit 137\) under its memory limit: most likely for memory \(OOMKilled could not be confirmed/.test(m))).toBe(true);
    h.rt.oomOnWorker('svc-web-1');
    await h.drive();
    expect(events(h).some((m) => /svc-web-1\b.*most likely for memory/.test(m))).toBe(true);
    expect(events(h).some((m) => /OOMKilled\)/.test(m))).toBe(false);
    h.now += 11_000;
    await h.drive();
    await h.expectSteady();
  });
});

describe('watch window with replicas', () => {
  async function watched() {
    const h = new AppHarness({ ...APP_SETTINGS, watchMs: 60_000 });
    h.makeApp('web', { replicas: 3 });
    const first = await h.deployed('web:1');
    await h.drive(undefined, { until: () => readInstances(h.db, h.app().id).every((r) => r.address !== null) && readInstances(h.db, h.app().id).length === 2 });
    const second = await h.deployed('web:2');
    await h.drive(undefined, { until: () => h.probed.length > 0 && h.now > 0 && h.dep(second.id).step === 'watch' });
    return { h, first, second };
  }

  it('a replica of the new version that exits on its own flips the whole app back; the old version comes back at full replicas', async () => {
    const { h, first, second } = await watched();
    expect(running(h)).toEqual(['svc-web-2', 'svc-web-2-r1', 'svc-web-2-r2']);
    h.rt.kill('svc-web-2-r1', 1);
    await h.drive(undefined, { until: () => h.dep(second.id).status === 'auto_rollback' });
    expect(h.dep(second.id).error).toBe('svc-web-2-r1 exited with code 1');
    await h.drive();
    expect(running(h)).toEqual(['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']);
    expect([...h.rt.containers.keys()].filter((n) => n.startsWith('svc-web-2'))).toEqual([]);
    expect(h.app()).toMatchObject({ currentDeployId: first.id, liveContainerName: 'svc-web-1', status: 'active' });
    expect(answer(h)).toEqual(addressesOf(h, running(h)));
    await h.expectSteady();
  });

  it('a replica of the new version killed from outside is healed alone, no flip-back', async () => {
    const { h, second } = await watched();
    h.rt.killFromOutside('svc-web-2-r2');
    await h.drive(undefined, { until: () => h.rt.containers.get('svc-web-2-r2')!.state === 'running' && readInstances(h.db, h.app().id)[1].address !== null });
    expect(h.dep(second.id)).toMatchObject({ status: 'success', step: 'watch' });
    expect(events(h).some((m) => /replica 2 \(svc-web-2-r2\) exited with code 137; restarted \(attempt 1\)/.test(m))).toBe(true);
    h.now += 61_000;
    await h.drive();
    expect(running(h)).toEqual(['svc-web-2', 'svc-web-2-r1', 'svc-web-2-r2']);
    await h.expectSteady();
  });
});
