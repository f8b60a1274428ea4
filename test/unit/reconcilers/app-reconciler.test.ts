// The app reconciler against a FakeRuntime and a real `:memory:` SQLite (DESIGN.md "Testing layers"):
// blue/green deploys step by step on a fake clock, failures and rollbacks, self-healing with backoff,
// orphan cleanup, and a daemon restart mid-deploy. Every test ends by reconciling once more and asserting
// that nothing changed (DESIGN.md rule 2).
import { describe, it, expect, beforeEach } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { Bus } from '../../../src/controller/bus.js';
import { createAppReconciler } from '../../../src/reconcilers/app/reconciler.js';
import { drainMinWaitMs } from '../../../src/reconcilers/app/plan.js';
import { dnsRecordsOf } from '../../../src/reconcilers/proxy/dns-sync.js';
import type { DnsRecords } from '../../../src/dns/hosts.js';
import { getAppByName } from '../../../src/store/apps.js';
import { observeLive } from '../../../src/observed/apps.js';
import { createDeploy, getDeploy, listAppEvents, listDeployEvents } from '../../../src/store/deploys.js';
import { deployEnv } from '../../../src/store/deploy-env.js';
import { missingRequired } from '../../../src/store/env.js';
import { appEvents, apps, deployEvents, deploys, type AppRow, type DeployTrigger } from '../../../src/store/schema/index.js';
import type { Reconciler, Result } from '../../../src/controller/types.js';
import type { Runtime } from '../../../src/runtime/runtime.js';
import type { Db } from '../../../src/store/db.js';
import { createApp, deleteApp, setEnv } from '../../support/commands.js';
import { shownAppType, shownImageRef, shownInternalPort } from '../../../src/store/app-view.js';

const settings = { network: 'svc-unit', instance: 'svc', dataDir: '/nonexistent-svc-unit', healthTimeoutMs: 30_000, dnsRefreshMs: 1_000, stopGraceSeconds: 10, watchMs: 0 };
const SUCCESS_STEPS = ['start', 'pull', 'start', 'health_check', 'health_check', 'route_update', 'stop_old', 'finalize'];
const DRAINED_STEPS = [...SUCCESS_STEPS, 'stop_old'];
const READS = new Set<keyof Runtime>(['list', 'inspect', 'ping', 'hasImage', 'listImageTags', 'logs', 'events']);
const sealer = testSealer();

let db: Db;
let rt: FakeRuntime;
let now: number;
let bus: Bus;
let enqueue: ReturnType<typeof recordingEnqueue>;
let rec: Reconciler;
/** Every dns.sync() call: when, and the records it would write. */
let dnsCalls: { at: number; records: DnsRecords }[];
/** What the proxy reports in flight per upstream `host:port`; a function of the fake time. */
let upstream: () => Map<string, number>;
/** Per-image HTTP answer of the health probe; unset: 503 for 'unhealthy' images, else 200. `null`: no answer. */
let probeAnswer: Map<string, number | null>;
let probed: string[];
/** Runtime mutations with the fake time they happened at. */
let timed: { method: string; name: string; at: number }[];

function makeReconciler(): Reconciler {
  return createAppReconciler({
    db,
    bus,
    runtime: rt,
    sealer,
    log: silentLogger,
    enqueue,
    dns: {
      async sync() {
        dnsCalls.push({ at: now, records: dnsRecordsOf(db) });
      },
    },
    proxy: { upstreamRequests: async () => upstream() },
    env: { resolve: (id) => deployEnv(db, sealer, id), missingRequired: (id) => missingRequired(db, id) },
    probe: async (url) => {
      probed.push(url);
      const host = new URL(url).hostname;
      const c = [...rt.containers.values()].find((x) => x.address === host && x.state === 'running');
      if (!c) return undefined;
      const answer = probeAnswer.get(c.spec.image);
      if (answer === null) return undefined;
      return answer ?? (rt.behaviour.get(c.spec.image) === 'unhealthy' ? 503 : 200);
    },
    now: () => now,
    settings,
  });
}

beforeEach(() => {
  db = memoryDb();
  now = Date.parse('2026-01-01T00:00:00Z');
  rt = new FakeRuntime({ images: ['web:1', 'web:2', 'web:bad', 'web:exits'], now: () => now });
  rt.behaviour.set('web:bad', 'unhealthy');
  rt.behaviour.set('web:exits', 'exits');
  timed = [];
  for (const method of ['run', 'start', 'stop', 'remove'] as const) {
    const original = rt[method].bind(rt) as (...a: unknown[]) => Promise<unknown>;
    (rt as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      const first = args[0] as string | { name: string };
      timed.push({ method, name: typeof first === 'string' ? first : first.name, at: now });
      return original(...args);
    };
  }
  bus = new Bus();
  enqueue = recordingEnqueue();
  dnsCalls = [];
  upstream = () => new Map();
  probeAnswer = new Map();
  probed = [];
  rec = makeReconciler();
});

// ---- helpers ---------------------------------------------------------------------------------------

/** The app as the API shows it: the spec with the image, port and type the live deploy gave it. */
const app = (name = 'web') => {
  const v = getAppByName(db, name)!;
  return { ...v, imageRef: shownImageRef(v), internalPort: shownInternalPort(v), appType: shownAppType(v) };
};
const dep = (id: number) => getDeploy(db, id)!;
const steps = (deployId: number) => listDeployEvents(db, deployId).map((e) => e.step);
const dnsNow = () => dnsCalls.at(-1)?.records;
const mutations = () => rt.calls.filter((c) => !READS.has(c.method));

function makeApp(name = 'web', fields: Partial<AppRow> = {}): AppRow {
  return createApp(db, enqueue, { name, imageRef: 'web:1', fallbackPort: 8080, healthCheckPath: '/healthz', ...fields }, 'rest');
}
function deploy(imageRef: string | null, trigger: DeployTrigger = 'manual', name = 'web') {
  return createDeploy(db, enqueue, bus, { appId: app(name).id, appName: name, imageRef, trigger });
}

interface Pass {
  at: number;
  result: Result;
}

/**
 * Runs the key as the work queue would: again after `requeueAfterMs` (moving the fake time by it), or at
 * once when the pass enqueued its own key; stops when a pass asks for neither. Bounded.
 */
async function drive(name = 'web', opts: { until?: () => boolean; max?: number } = {}): Promise<Pass[]> {
  const passes: Pass[] = [];
  for (let i = 0; i < (opts.max ?? 2_000); i++) {
    if (opts.until?.()) return passes;
    const before = enqueue.keys.length;
    const result = await rec.reconcile(name);
    passes.push({ at: now, result });
    const self = enqueue.keys.slice(before).includes(`app:${name}`);
    if (result.requeueAfterMs !== undefined) now += result.requeueAfterMs;
    else if (!self && !opts.until) return passes;
  }
  throw new Error(`app ${name} did not settle`);
}

/** A successful first deploy of web:1 (the baseline of most tests). */
async function deployed(imageRef = 'web:1') {
  if (!getAppByName(db, 'web')) makeApp();
  const d = deploy(imageRef);
  await drive();
  expect(dep(d.id).status).toBe('success');
  return d;
}

/**
 * DESIGN.md rule 2: one more pass changes nothing and makes no engine call but reads; nor does it sync
 * DNS (rule 7), except for a deleted app, whose pass always re-syncs (the sync itself writes only changes).
 */
async function expectSteady(name = 'web', opts: { dnsSyncs?: boolean } = {}) {
  const snapshot = () => ({
    app: db.select().from(apps).where(eq(apps.name, name)).get(),
    deploys: db.select().from(deploys).orderBy(asc(deploys.id)).all(),
    deployEvents: db.select().from(deployEvents).all(),
    appEvents: db.select().from(appEvents).all(),
    containers: [...rt.containers.values()].map((c) => [c.spec.name, c.state, c.address]),
    dns: dnsNow(),
  });
  const before = snapshot();
  const calls = rt.calls.length;
  const syncs = dnsCalls.length;
  const result = await rec.reconcile(name);
  expect(result).toEqual({});
  if (!opts.dnsSyncs) expect(dnsCalls.length).toBe(syncs);
  expect(rt.calls.slice(calls).filter((c) => !READS.has(c.method))).toEqual([]);
  expect(snapshot()).toEqual(before);
}

// ---- deploys ---------------------------------------------------------------------------------------

describe('app reconciler: deploys', () => {
  it('first deploy: the exact event steps of API.md, staging container, app active and routed', async () => {
    makeApp();
    setEnv(db, sealer, enqueue, app().id, { key: 'GREETING', value: 'hello' }, null);
    const d = deploy('web:1');
    expect(dep(d.id).status).toBe('pending');
    await drive();

    expect(dep(d.id)).toMatchObject({ status: 'success', step: null, error: null, envDiff: { added: ['GREETING'], removed: [], changed: [] } });
    expect(steps(d.id)).toEqual(SUCCESS_STEPS);
    const events = listDeployEvents(db, d.id);
    expect(events.every((e) => e.level === 'info')).toBe(true);
    expect(events[0].message).toBe('deploying web with image web:1');
    expect(events[6].message).toBe('no previous container');
    expect(app()).toMatchObject({
      status: 'active', liveContainerName: 'svc-web-1', currentDeployId: d.id, imageRef: 'web:1', liveAddress: '10.0.0.2', healFailures: 0,
    });
    const c = rt.containers.get('svc-web-1')!;
    expect(c.state).toBe('running');
    expect(c.spec).toMatchObject({
      image: 'web:1', network: 'svc-unit', env: { GREETING: 'hello' },
      labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.app': 'web', 'svc.app-id': String(app().id), 'svc.deploy': String(d.id), 'svc.role': 'app' },
    });
    expect(probed[0]).toBe('http://10.0.0.2:3000/healthz');
    expect(dnsNow()).toEqual({ 'web.svc.internal.': '10.0.0.2' });
    expect(enqueue.keys).toContain('proxy:main');
    expect(rt.callsOf('pull')).toEqual([]); // a tagged image the engine has is not pulled
    await expectSteady();
  });

  it('second deploy: success at the switch, then the old container drains while the proxy reports connections open, then is stopped and removed', async () => {
    const first = await deployed();
    const cutAt = () => dnsCalls.find((c) => c.records['web.svc.internal.'] === '10.0.0.3')?.at;
    // Two connections on the old container until 3 s after the switch (on the port it listens on, whatever the new one's).
    upstream = () => {
      const cut = cutAt();
      return new Map([['10.0.0.2:3000', cut === undefined || now < cut + 3_000 ? 2 : 0]]);
    };
    const d = deploy('web:2');
    await drive(undefined, { until: () => dep(d.id).status === 'success' });
    expect(now - cutAt()!).toBeLessThan(100); // the deploy does not wait for the drain
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(dep(d.id)).toMatchObject({ drainOpen: 2, drainFrom: new Date(cutAt()!).toISOString(), drainUntil: new Date(cutAt()! + 30_000).toISOString() });
    await drive();
    expect(rt.containers.has('svc-web-1')).toBe(false); // by the drain itself, not a later orphan sweep

    expect(steps(d.id)).toEqual(DRAINED_STEPS);
    expect(listDeployEvents(db, d.id)[6].message).toBe('old container svc-web-1 drains: 2 connections open at the switch; stopped when they end, at most 30 s (drain_seconds)');
    expect(listDeployEvents(db, d.id)[8].message).toMatch(/^old container svc-web-1 stopped and removed: its connections ended after 3\.\d s; 2 connections open at the switch, 0 still open when it stopped$/);
    expect(dep(d.id)).toMatchObject({ drainFrom: null, drainUntil: null });
    const cut = cutAt()!;
    const stop = timed.find((t) => t.method === 'stop' && t.name === 'svc-web-1')!;
    expect(stop.at - cut).toBeGreaterThanOrEqual(3_000);
    expect(stop.at - cut).toBeLessThan(4_200);
    expect(rt.callsOf('stop')).toEqual([['svc-web-1', 10]]);
    // (the first remove is the create step clearing a half-made container of an interrupted pass)
    expect(timed.filter((t) => t.name === 'svc-web-1').map((t) => t.method)).toEqual(['remove', 'run', 'stop', 'remove']);
    expect(rt.containers.has('svc-web-1')).toBe(false);
    expect(app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-2', currentDeployId: d.id, imageRef: 'web:2', liveAddress: '10.0.0.3' });
    expect(dep(first.id).status).toBe('success');
    expect(dnsNow()).toEqual({ 'web.svc.internal.': '10.0.0.3' });
    await expectSteady();
  });

  it('drain: an idle old container still waits until the proxy re-resolved (drainMinWaitMs); a busy one is stopped when drain_seconds passed regardless', async () => {
    await deployed();
    const cutAt = (addr: string) => dnsCalls.find((c) => c.records['web.svc.internal.'] === addr)!.at;

    deploy('web:2');
    await drive();
    const idleStop = timed.find((t) => t.method === 'stop' && t.name === 'svc-web-1')!;
    expect(idleStop.at - cutAt('10.0.0.3')).toBeGreaterThanOrEqual(drainMinWaitMs(settings.dnsRefreshMs));
    expect(idleStop.at - cutAt('10.0.0.3')).toBeLessThan(drainMinWaitMs(settings.dnsRefreshMs) + 200);

    upstream = () => new Map([['10.0.0.3:3000', 1]]); // a stream that never ends
    db.update(apps).set({ drainSeconds: 45 }).run();
    const d3 = deploy('web:1');
    await drive();
    const busyStop = timed.find((t) => t.method === 'stop' && t.name === 'svc-web-2')!;
    expect(busyStop.at - cutAt('10.0.0.4')).toBe(45_000);
    expect(listDeployEvents(db, d3.id).at(-1)).toMatchObject({ step: 'stop_old', level: 'warn', message: 'old container svc-web-2 stopped and removed: drain_seconds (45 s) passed; 1 connection open at the switch, 1 still open when it stopped' });
    expect(dep(d3.id).status).toBe('success');
    expect(rt.containers.has('svc-web-2')).toBe(false);
    expect(app().liveContainerName).toBe('svc-web-3');
    await expectSteady();
  });

  it('a newer deploy does not wait for a drain: two old versions drain at once, each stopped when its own connections end', async () => {
    await deployed();
    const cutAt = (addr: string) => dnsCalls.find((c) => c.records['web.svc.internal.'] === addr)?.at;
    // A WebSocket on the first version until 20 s after its switch, one on the second until 5 s after its own.
    upstream = () => {
      const cut3 = cutAt('10.0.0.3');
      const cut4 = cutAt('10.0.0.4');
      return new Map([
        ['10.0.0.2:3000', cut3 === undefined || now < cut3 + 20_000 ? 1 : 0],
        ['10.0.0.3:3000', cut4 === undefined || now < cut4 + 5_000 ? 1 : 0],
      ]);
    };
    const d2 = deploy('web:2');
    await drive(undefined, { until: () => dep(d2.id).status === 'success' });
    const d3 = deploy('web:1');
    await drive(undefined, { until: () => dep(d3.id).status === 'success' });
    expect(now - cutAt('10.0.0.3')!).toBeLessThan(1_000); // d3 ran while d2's old version drained
    expect([...rt.containers.entries()].filter(([, c]) => c.state === 'running').map(([n]) => n).sort()).toEqual(['svc-web-1', 'svc-web-2', 'svc-web-3']);
    await drive();
    const stopAt = (name: string) => timed.find((t) => t.method === 'stop' && t.name === name)!.at;
    expect(stopAt('svc-web-2') - cutAt('10.0.0.4')!).toBeGreaterThanOrEqual(5_000);
    expect(stopAt('svc-web-2') - cutAt('10.0.0.4')!).toBeLessThan(6_200);
    expect(stopAt('svc-web-1') - cutAt('10.0.0.3')!).toBeGreaterThanOrEqual(20_000);
    expect(stopAt('svc-web-1') - cutAt('10.0.0.3')!).toBeLessThan(21_200);
    expect([...rt.containers.keys()]).toEqual(['svc-web-3']);
    expect(listDeployEvents(db, d2.id).at(-1)!.message).toMatch(/^old container svc-web-1 stopped and removed: its connections ended after 20\.\d s; 1 connection open at the switch, 0 still open/);
    await expectSteady();
  });

  it('drain_seconds 0: the old version is stopped once the proxy re-resolved, whatever it has open', async () => {
    await deployed();
    db.update(apps).set({ drainSeconds: 0 }).run();
    upstream = () => new Map([['10.0.0.2:3000', 4]]);
    const d = deploy('web:2');
    await drive();
    const cut = dnsCalls.find((c) => c.records['web.svc.internal.'] === '10.0.0.3')!.at;
    expect(timed.find((t) => t.method === 'stop' && t.name === 'svc-web-1')!.at - cut).toBe(drainMinWaitMs(settings.dnsRefreshMs));
    expect(listDeployEvents(db, d.id).at(-1)!.message).toBe('old container svc-web-1 stopped and removed: drain_seconds (0 s) passed; 4 connections open at the switch, 4 still open when it stopped');
    await expectSteady();
  });

  it('unhealthy image: auto_rollback after 30 s of fake time, staging removed, the old container keeps serving', async () => {
    const first = await deployed();
    const d = deploy('web:bad');
    const passes = await drive(undefined, { until: () => dep(d.id).status === 'auto_rollback' });
    expect(rt.containers.has('svc-web-2')).toBe(false); // removed by the failing step itself
    passes.push(...(await drive()));

    const runAt = timed.find((t) => t.method === 'run' && t.name === 'svc-web-2')!.at;
    const removedAt = timed.find((t) => t.method === 'remove' && t.name === 'svc-web-2' && t.at > runAt)!.at;
    expect(removedAt - runAt).toBeGreaterThanOrEqual(30_000);
    expect(removedAt - runAt).toBeLessThan(30_300);
    expect(passes.length).toBeGreaterThan(30); // it kept probing meanwhile
    expect(dep(d.id)).toMatchObject({ status: 'auto_rollback', step: null });
    expect(dep(d.id).error).toMatch(/health check did not pass within 30 s \(HTTP 503\)/);
    expect(steps(d.id)).toEqual(['start', 'pull', 'start', 'health_check', 'health_check']);
    expect(listDeployEvents(db, d.id).at(-1)!.level).toBe('error');
    expect(rt.containers.has('svc-web-2')).toBe(false);
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(rt.callsOf('stop')).toEqual([]);
    expect(app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-1', currentDeployId: first.id, imageRef: 'web:1', liveAddress: '10.0.0.2' });
    expect(dnsNow()).toEqual({ 'web.svc.internal.': '10.0.0.2' });
    await expectSteady();
  });

  it('exiting image: auto_rollback at once; the old container keeps serving', async () => {
    await deployed();
    const d = deploy('web:exits');
    await drive();
    const runAt = timed.find((t) => t.method === 'run' && t.name === 'svc-web-2')!.at;
    const removedAt = timed.filter((t) => t.method === 'remove' && t.name === 'svc-web-2').at(-1)!.at;
    expect(removedAt).toBe(runAt);
    expect(dep(d.id)).toMatchObject({ status: 'auto_rollback' });
    expect(dep(d.id).error).toMatch(/container exited with code 1 before it became healthy/);
    expect(rt.containers.has('svc-web-2')).toBe(false);
    expect(app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-1', imageRef: 'web:1' });
    await expectSteady();
  });

  it('exiting image on a first deploy: auto_rollback with no live container leaves the app in error', async () => {
    makeApp();
    const d = deploy('web:exits');
    await drive();
    expect(dep(d.id).status).toBe('auto_rollback');
    expect(rt.containers.size).toBe(0);
    expect(app()).toMatchObject({ status: 'error', liveContainerName: null, currentDeployId: null, imageRef: 'web:1' });
    await expectSteady();
  });

  it('pull failure with no local image: failed at pull, nothing touched', async () => {
    await deployed();
    rt.images.delete('web:2');
    rt.pullFailures.set('web:2', 'manifest for web:2 not found');
    const before = mutations().length;
    const d = deploy('web:2');
    await drive();

    expect(dep(d.id)).toMatchObject({ status: 'failed', error: 'pull of web:2 failed: manifest for web:2 not found' });
    expect(steps(d.id)).toEqual(['start', 'pull', 'pull']);
    expect(listDeployEvents(db, d.id).map((e) => e.level)).toEqual(['info', 'info', 'error']);
    expect(mutations().slice(before).map((c) => c.method)).toEqual(['pull']);
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(app()).toMatchObject({ status: 'error', liveContainerName: 'svc-web-1', imageRef: 'web:1' });
    await expectSteady();
  });

  it('pull failure with a local image: a warn event and the deploy goes on', async () => {
    rt.images.add('web:latest');
    rt.pullFailures.set('*', 'registry unreachable');
    makeApp();
    const d = deploy('web:latest');
    await drive();

    expect(dep(d.id).status).toBe('success');
    expect(steps(d.id)).toEqual(['start', 'pull', 'pull', 'start', 'health_check', 'health_check', 'route_update', 'stop_old', 'finalize']);
    const warn = listDeployEvents(db, d.id)[2];
    expect(warn).toMatchObject({ level: 'warn', message: 'pull of web:latest failed (registry unreachable); using the local image' });
    expect(rt.callsOf('pull')).toEqual([['web:latest']]);
    expect(app()).toMatchObject({ status: 'active', imageRef: 'web:latest' });
    await expectSteady();
  });

  it('webhook deploy with a missing required variable: failed at validate with an error event, no container', async () => {
    makeApp();
    setEnv(db, sealer, enqueue, app().id, { key: 'DATABASE_URL', value: '', required: true }, null);
    const d = deploy('web:1', 'webhook');
    await drive();

    expect(dep(d.id)).toMatchObject({ status: 'failed', error: 'missing required environment variables: DATABASE_URL' });
    expect(steps(d.id)).toEqual(['start', 'validate']);
    expect(listDeployEvents(db, d.id)[1].level).toBe('error');
    expect(mutations()).toEqual([]);
    expect(app()).toMatchObject({ status: 'error', liveContainerName: null });
    await expectSteady();
  });

  it('no image: failed at validate', async () => {
    makeApp('web', { imageRef: null });
    const d = deploy(null);
    await drive();
    expect(dep(d.id)).toMatchObject({ status: 'failed' });
    expect(dep(d.id).error).toMatch(/no image to deploy/);
    expect(steps(d.id)).toEqual(['start', 'validate']);
    expect(listDeployEvents(db, d.id)[0].message).toBe('deploying web with image (none)');
    expect(mutations()).toEqual([]);
    await expectSteady();
  });

  it('secrets never reach events or the deploy error, even when the engine echoes them', async () => {
    const secret = 'tok-5f2a9c-very-secret';
    makeApp();
    setEnv(db, sealer, enqueue, app().id, { key: 'API_TOKEN', value: secret, isSecret: true }, null);
    setEnv(db, sealer, enqueue, app().id, { key: 'MODE', value: 'production' }, null);
    rt.run = async (spec) => {
      throw new Error(`invalid environment: API_TOKEN=${spec.env!.API_TOKEN} MODE=${spec.env!.MODE}`);
    };
    const d = deploy('web:1');
    await drive();

    expect(dep(d.id)).toMatchObject({ status: 'failed', error: 'invalid environment: API_TOKEN=[redacted] MODE=production' });
    const last = listDeployEvents(db, d.id).at(-1)!;
    expect(last).toMatchObject({ step: 'create', level: 'error', message: 'invalid environment: API_TOKEN=[redacted] MODE=production' });
    const everything = JSON.stringify([db.select().from(deploys).all(), db.select().from(deployEvents).all(), db.select().from(appEvents).all()]);
    expect(everything).not.toContain(secret);
    await expectSteady();
  });

  it('adopted container: routed as is, then the first deploy stops it (not removed) after the switch and the app becomes managed', async () => {
    rt.images.add('legacy:1');
    await rt.run({ name: 'legacy-web', image: 'legacy:1', network: 'svc-unit', labels: {} });
    makeApp('web', { appType: 'adopted_container', source: 'legacy-web' });
    await drive();
    expect(app()).toMatchObject({ status: 'active', liveContainerName: 'legacy-web', liveAddress: '10.0.0.2', currentDeployId: null });
    expect(dnsNow()).toEqual({ 'web.svc.internal.': '10.0.0.2' });

    const d = deploy('web:1');
    await drive();
    expect(dep(d.id).status).toBe('success');
    expect(steps(d.id)).toEqual(DRAINED_STEPS);
    expect(listDeployEvents(db, d.id)[8].message).toMatch(/^old container legacy-web stopped \(kept, not removed\): /);
    expect(rt.containers.get('legacy-web')!.state).toBe('exited');
    expect(app()).toMatchObject({ appType: 'managed', status: 'active', liveContainerName: 'svc-web-1', currentDeployId: d.id });
    await expectSteady();
  });

  it('adopted container deployed before the reconciler ever looked at the app: still stopped after the switch', async () => {
    rt.images.add('legacy:1');
    await rt.run({ name: 'legacy-web', image: 'legacy:1', network: 'svc-unit', labels: {} });
    makeApp('web', { appType: 'adopted_container', source: 'legacy-web' });
    const d = deploy('web:1'); // e.g. a manifest that creates the app and deploys it at once
    await drive();
    expect(dep(d.id).status).toBe('success');
    expect(listDeployEvents(db, d.id)[8].message).toMatch(/^old container legacy-web stopped \(kept, not removed\): /);
    expect(rt.containers.get('legacy-web')!.state).toBe('exited');
    expect(app()).toMatchObject({ appType: 'managed', liveContainerName: 'svc-web-1' });
    await expectSteady();
  });

  it('a deploy of a present image runs on from its begin to the switch in one pass (0045), each step persisted with its event', async () => {
    await deployed();
    const d2 = deploy('web:2');
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 0 }); // the switch handed the old to its drain: finalize next
    expect(dep(d2.id)).toMatchObject({ status: 'running', step: 'finalize', attemptStep: 'route_update', stepAttempts: 1, drainOpen: 0 });
    expect(steps(d2.id)).toEqual(['start', 'pull', 'start', 'health_check', 'health_check', 'route_update', 'stop_old']);
    expect(app()).toMatchObject({ liveContainerName: 'svc-web-2' });
    await drive();
    expect(dep(d2.id).status).toBe('success');
    await expectSteady();
  });

  it('a staging container that does not answer yet ends the run on: the health check waits in its own passes', async () => {
    await deployed();
    probeAnswer.set('web:2', null); // listening not yet
    const d2 = deploy('web:2');
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 25 });
    expect(dep(d2.id)).toMatchObject({ step: 'health_check', stagingContainer: 'svc-web-2' });
    expect(app()).toMatchObject({ liveContainerName: 'svc-web-1' });
  });

  it('one deploy at a time, in creation order: a deploy queued during another runs after it', async () => {
    await deployed();
    const d2 = deploy('web:2');
    await drive(undefined, { until: () => dep(d2.id).step === 'finalize' }); // still running: its old version handed to the drain
    const d3 = deploy('web:1');
    await drive();
    expect(dep(d2.id).status).toBe('success');
    expect(dep(d3.id).status).toBe('success');
    // (d2's old version may still drain after d3 began: only the deploy itself ends first)
    expect(listDeployEvents(db, d3.id)[0].id).toBeGreaterThan(listDeployEvents(db, d2.id).find((e) => e.step === 'finalize')!.id);
    expect(app()).toMatchObject({ liveContainerName: 'svc-web-3', currentDeployId: d3.id });
    expect([...rt.containers.keys()]).toEqual(['svc-web-3']);
    await expectSteady();
  });
});

// ---- self-healing ----------------------------------------------------------------------------------

describe('app reconciler: self-healing and cleanup', () => {
  it('a crashed live container is started again, with an app event; the failure count resets after 10 s up', async () => {
    await deployed();
    rt.kill('svc-web-1');
    const before = mutations().length;
    await drive();

    // The network first: it re-tunes the bridge's neighbour retries (bridge-neighbours.ts).
    expect(mutations().slice(before).map((c) => [c.method, c.args[0]])).toEqual([['ensureNetwork', 'svc-unit'], ['start', 'svc-web-1']]);
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');
    const events = listAppEvents(db, app().id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ step: 'heal', level: 'warn', message: 'live container svc-web-1 was not running; restarted (attempt 1)' });
    expect(app()).toMatchObject({ status: 'active', healFailures: 0, healNotBefore: null, liveAddress: '10.0.0.2' });
    await expectSteady();
  });

  it('a removed live container is recreated from the deploy image and its env snapshot (not the current env)', async () => {
    makeApp();
    setEnv(db, sealer, enqueue, app().id, { key: 'FOO', value: 'one' }, null);
    const d = await deployed();
    setEnv(db, sealer, enqueue, app().id, { key: 'FOO', value: 'two' }, null);
    rt.containers.delete('svc-web-1'); // gone behind svc's back
    await drive();

    const c = rt.containers.get('svc-web-1')!;
    expect(c.state).toBe('running');
    expect(c.spec).toMatchObject({ image: 'web:1', env: { FOO: 'one' }, network: 'svc-unit', labels: { 'svc.deploy': String(d.id), 'svc.app': 'web' } });
    expect(listAppEvents(db, app().id).map((e) => e.message)).toEqual(['live container svc-web-1 was gone; recreated']);
    expect(app()).toMatchObject({ healFailures: 0, healNotBefore: null }); // gone is not a crash: uncounted
    expect(app()).toMatchObject({ status: 'active', liveAddress: '10.0.0.3', liveContainerId: c.id });
    expect(dnsNow()).toEqual({ 'web.svc.internal.': '10.0.0.3' });
    await expectSteady();
  });

  it('a state restored under another instance name: the container made from the deploy becomes the live one, not an orphan', async () => {
    const d = await deployed();
    // What a restore on a new host leaves: the live container named by the old instance, gone from this engine.
    rt.containers.delete('svc-web-1');
    observeLive(db, app().id, { containerName: 'old-web-1', containerId: 'gone' });
    await drive();

    expect(app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-1' });
    expect(rt.containers.get('svc-web-1')!.spec).toMatchObject({ labels: { 'svc.deploy': String(d.id) } });
    expect([...rt.containers.keys()]).toEqual(['svc-web-1']);
    await expectSteady();
  });

  it('a container the engine is still removing (docker rm -f) is recreated at once, even inside a crash backoff, and not counted', async () => {
    await deployed();
    rt.kill('svc-web-1');
    await rec.reconcile('web'); // one counted restart: the next would wait 10 s
    expect(app().healFailures).toBe(1);
    rt.kill('svc-web-1');
    rt.containers.get('svc-web-1')!.state = 'removing';
    const before = mutations().length;
    await drive();

    expect(mutations().slice(before).map((c) => [c.method, (c.args[0] as { name?: string }).name ?? c.args[0]])).toEqual([
      ['ensureNetwork', 'svc-unit'],
      ['remove', 'svc-web-1'],
      ['run', 'svc-web-1'],
    ]);
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(listAppEvents(db, app().id).map((e) => [e.level, e.message])).toEqual([
      ['warn', 'live container svc-web-1 was not running; restarted (attempt 1)'],
      ['warn', 'live container svc-web-1 was gone; recreated'],
    ]);
    expect(app()).toMatchObject({ status: 'active', healFailures: 0 }); // 10 s up since the restart: reset
    await expectSteady();
  });

  it('a start that fails because the container was removed meanwhile recreates it in the same pass, uncounted, with no error event', async () => {
    await deployed();
    rt.kill('svc-web-1');
    const start = rt.start.bind(rt);
    rt.start = async (name: string) => {
      rt.containers.get(name)!.state = 'removing'; // docker rm -f got there first
      rt.start = start;
      return start(name);
    };
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 0 });
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(listAppEvents(db, app().id).map((e) => [e.level, e.message])).toEqual([['warn', 'live container svc-web-1 was gone; recreated']]);
    expect(app()).toMatchObject({ healFailures: 0, healNotBefore: null });
    await drive();
    await expectSteady();
  });

  it('a crash loop backs off: heal, heal_wait 10 s, heal, heal_wait 20 s', async () => {
    await deployed();
    const starts = () => rt.callsOf('start').length;

    rt.kill('svc-web-1');
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 0 });
    expect(starts()).toBe(1);
    rt.kill('svc-web-1');
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 10_000 });
    expect(starts()).toBe(1);
    now += 9_999;
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 1 });
    now += 1;
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 0 });
    expect(starts()).toBe(2);
    rt.kill('svc-web-1');
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 20_000 });
    expect(starts()).toBe(2);
    now += 20_000;
    await drive();

    expect(starts()).toBe(3);
    expect(listAppEvents(db, app().id).map((e) => e.message.replace(/.*\(/, '('))).toEqual(['(attempt 1)', '(attempt 2)', '(attempt 3)']);
    expect(app()).toMatchObject({ status: 'active', healFailures: 0, healNotBefore: null });
    await expectSteady();
  });

  it('drift: a live container that came back with another address gets its DNS answer moved', async () => {
    await deployed();
    rt.containers.get('svc-web-1')!.address = '10.0.0.9';
    const before = mutations().length;
    await drive();
    expect(mutations().length).toBe(before);
    expect(app()).toMatchObject({ liveAddress: '10.0.0.9', status: 'active' });
    expect(dnsNow()).toEqual({ 'web.svc.internal.': '10.0.0.9' });
    await expectSteady();
  });

  it('orphans labelled for the app are removed; another instance\'s containers are not', async () => {
    const { id } = await deployed();
    const labels = (over: Record<string, string>) => ({
      'svc.managed': 'true', 'svc.instance': 'svc', 'svc.app': 'web', 'svc.app-id': String(app().id), 'svc.deploy': '77', 'svc.role': 'app', ...over,
    });
    await rt.run({ name: 'svc-web-77', image: 'web:1', network: 'svc-unit', labels: labels({}) });
    await rt.run({ name: 'svc-web-old-app', image: 'web:1', network: 'svc-unit', labels: labels({ 'svc.app-id': '999' }) });
    await rt.run({ name: 'other-web-1', image: 'web:1', network: 'svc-unit', labels: labels({ 'svc.instance': 'other' }) });
    await drive();

    expect([...rt.containers.keys()].sort()).toEqual(['other-web-1', 'svc-web-1']);
    expect(app()).toMatchObject({ liveContainerName: 'svc-web-1', currentDeployId: id, status: 'active' });
    await expectSteady();
  });

  it('a deleted app: every container labelled for it is removed and its DNS answer dropped', async () => {
    await deployed();
    await rt.run({
      name: 'svc-web-9', image: 'web:1', network: 'svc-unit',
      labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.app': 'web', 'svc.deploy': '9', 'svc.role': 'app' },
    });
    // Issue 20: the images built for it go too, not another app's whose name merely starts the same.
    rt.images.add('svc-build/web:' + 'a'.repeat(40));
    rt.images.add('svc-build/webx:' + 'a'.repeat(40));
    deleteApp(db, enqueue, app().id);
    await drive();

    expect(rt.containers.size).toBe(0);
    expect([...rt.images].filter((i) => i.startsWith('svc-build/'))).toEqual(['svc-build/webx:' + 'a'.repeat(40)]);
    expect(dnsNow()).toEqual({});
    expect(db.select().from(deploys).all()).toEqual([]);
    await expectSteady('web', { dnsSyncs: true });
  });

  it('resync lists apps that exist only as containers of ours (deleted while the daemon was down)', async () => {
    makeApp();
    const ghost = { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.app': 'ghost', 'svc.deploy': '3', 'svc.role': 'app' };
    await rt.run({ name: 'svc-ghost-3', image: 'web:1', network: 'svc-unit', labels: ghost });
    await rt.run({ name: 'svc-other-3', image: 'web:1', network: 'svc-unit', labels: { ...ghost, 'svc.app': 'other', 'svc.instance': 'other' } });
    expect((await rec.listNames()).sort()).toEqual(['ghost', 'web']);
    await rec.reconcile('ghost');
    expect([...rt.containers.keys()]).toEqual(['svc-other-3']);
  });

  it('a daemon restart mid-deploy (new reconciler, same database and engine) at health_check completes the deploy once', async () => {
    await deployed();
    probeAnswer.set('web:2', null); // not answering yet
    const d = deploy('web:2');
    await drive(undefined, { until: () => dep(d.id).step === 'health_check' && probed.length > 3 });
    expect(dep(d.id).status).toBe('running');

    rec = makeReconciler(); // the restarted daemon
    probeAnswer.delete('web:2');
    await drive();

    expect(dep(d.id).status).toBe('success');
    expect(steps(d.id)).toEqual(DRAINED_STEPS);
    expect(rt.callsOf('run').map((a) => (a[0] as { name: string }).name)).toEqual(['svc-web-1', 'svc-web-2']);
    expect([...rt.containers.keys()]).toEqual(['svc-web-2']);
    expect(app()).toMatchObject({ status: 'active', liveContainerName: 'svc-web-2', currentDeployId: d.id, imageRef: 'web:2' });
    await expectSteady();
  });

  it('a daemon restart while the old container drains: the drain keeps its deadline and the old one is stopped once', async () => {
    await deployed();
    const cutAt = () => dnsCalls.find((c) => c.records['web.svc.internal.'] === '10.0.0.3')?.at;
    upstream = () => {
      const cut = cutAt();
      return new Map([['10.0.0.2:3000', cut !== undefined && now < cut + 3_000 ? 1 : 0]]);
    };
    const d = deploy('web:2');
    await drive(undefined, { until: () => dep(d.id).status === 'success' && now > cutAt()! + 2_000 });
    expect(rt.containers.get('svc-web-1')!.state).toBe('running');

    rec = makeReconciler();
    await drive();
    const stop = timed.filter((t) => t.method === 'stop');
    expect(stop.map((t) => t.name)).toEqual(['svc-web-1']);
    expect(stop[0].at - cutAt()!).toBeGreaterThanOrEqual(3_000);
    expect(stop[0].at - cutAt()!).toBeLessThan(4_200);
    expect(dep(d.id).status).toBe('success');
    expect(steps(d.id)).toEqual(DRAINED_STEPS);
    expect([...rt.containers.keys()]).toEqual(['svc-web-2']);
    await expectSteady();
  });
});
