// The app reconciler on a FakeRuntime, a real `:memory:` SQLite and a fake clock (DESIGN.md "Testing
// layers"), with the helpers its tests share: drive a key as the work queue would, make apps and deploys,
// and assert the steady state (DESIGN.md rule 2). One harness per test; nothing module-global.
import { expect } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from './db.js';
import { FakeRuntime } from './fake-runtime.js';
import { silentLogger } from '../../src/log.js';
import { Bus } from '../../src/controller/bus.js';
import { createAppReconciler } from '../../src/reconcilers/app/reconciler.js';
import type { AppReconcilerDeps } from '../../src/reconcilers/app/deps.js';
import { createKillNotes } from '../../src/reconcilers/app/kills.js';
import { dnsRecordsOf } from '../../src/reconcilers/proxy/dns-sync.js';
import type { DnsRecords } from '../../src/dns/hosts.js';
import { getAppByName } from '../../src/store/apps.js';
import { shownAppType, shownImageRef, shownInternalPort } from '../../src/store/app-view.js';
import { createDeploy, getDeploy, listDeployEvents } from '../../src/store/deploys.js';
import { deployEnv } from '../../src/store/deploy-env.js';
import { missingRequired } from '../../src/store/env.js';
import { appEvents, appInstances, apps, appStatus, deployEvents, deploys, type AppRow, type DeployTrigger } from '../../src/store/schema/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reconciler, Result } from '../../src/controller/types.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { createApp } from './commands.js';

export const APP_SETTINGS: AppReconcilerDeps['settings'] = {
  network: 'svc-unit', instance: 'svc', dataDir: join(tmpdir(), `svc-unit-${process.pid}`), healthTimeoutMs: 30_000, dnsRefreshMs: 1_000, stopGraceSeconds: 10, watchMs: 0,
};
export const SUCCESS_STEPS = ['start', 'pull', 'start', 'health_check', 'health_check', 'route_update', 'stop_old', 'finalize'];
/** A deploy that replaced a version: its drain's end is one more `stop_old` event after the success (issue 37). */
export const DRAINED_STEPS = [...SUCCESS_STEPS, 'stop_old'];
const READS = new Set<keyof Runtime>(['list', 'inspect', 'ping', 'hasImage', 'listImageTags', 'logs', 'events', 'pastActions']);

export interface Pass {
  at: number;
  result: Result;
}

export class AppHarness {
  readonly sealer = testSealer();
  readonly db = memoryDb();
  now = Date.parse('2026-01-01T00:00:00Z');
  readonly rt = new FakeRuntime({ images: ['web:1', 'web:2', 'web:bad', 'web:exits'], now: () => this.now, instance: 'svc' });
  readonly bus = new Bus();
  readonly enqueue = recordingEnqueue();
  /** Every dns.sync() call: when, and the records it would write. */
  readonly dnsCalls: { at: number; records: DnsRecords }[] = [];
  /** What the proxy reports in flight per upstream `host:port`; a function of the fake time. */
  upstream: () => Map<string, number> = () => new Map();
  /** Per-image HTTP answer of the health probe; unset: 503 for 'unhealthy' images, else 200. `null`: no answer. */
  readonly probeAnswer = new Map<string, number | null>();
  readonly probed: string[] = [];
  /** The engine's stopping `kill` events as the manager would feed them (kills.ts). */
  readonly kills = createKillNotes(() => this.now);
  /** Runtime mutations with the fake time they happened at. */
  readonly timed: { method: string; name: string; at: number }[] = [];
  rec: Reconciler;

  constructor(readonly settings: AppReconcilerDeps['settings'] = APP_SETTINGS) {
    this.rt.behaviour.set('web:bad', 'unhealthy');
    this.rt.behaviour.set('web:exits', 'exits');
    for (const method of ['run', 'start', 'stop', 'remove'] as const) {
      const original = this.rt[method].bind(this.rt) as (...a: unknown[]) => Promise<unknown>;
      (this.rt as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const first = args[0] as string | { name: string };
        this.timed.push({ method, name: typeof first === 'string' ? first : first.name, at: this.now });
        return original(...args);
      };
    }
    this.rec = this.makeReconciler();
  }

  /** A new reconciler on the same database and engine: what a restarted daemon has. `build` enables svc_build. */
  makeReconciler(build?: AppReconcilerDeps['build']): Reconciler {
    return createAppReconciler({
      build,
      db: this.db,
      bus: this.bus,
      runtime: this.rt,
      sealer: this.sealer,
      log: silentLogger,
      enqueue: this.enqueue,
      dns: { sync: async () => void this.dnsCalls.push({ at: this.now, records: dnsRecordsOf(this.db) }) },
      proxy: { upstreamRequests: async () => this.upstream() },
      env: { resolve: (id) => deployEnv(this.db, this.sealer, id), missingRequired: (id) => missingRequired(this.db, id) },
      kills: this.kills,
      probe: async (url) => {
        this.probed.push(url);
        const host = new URL(url).hostname;
        const c = [...this.rt.containers.values()].find((x) => x.address === host && x.state === 'running');
        if (!c) return undefined;
        const answer = this.probeAnswer.get(c.spec.image);
        if (answer === null) return undefined;
        return answer ?? (this.rt.behaviour.get(c.spec.image) === 'unhealthy' ? 503 : 200);
      },
      now: () => this.now,
      settings: this.settings,
    });
  }

  /** The app as the API shows it: the spec with the image, port and type the live deploy gave it. */
  app = (name = 'web') => {
    const v = getAppByName(this.db, name)!;
    return { ...v, imageRef: shownImageRef(v), internalPort: shownInternalPort(v), appType: shownAppType(v) };
  };
  dep = (id: number) => getDeploy(this.db, id)!;
  steps = (deployId: number) => listDeployEvents(this.db, deployId).map((e) => e.step);
  dnsNow = () => this.dnsCalls.at(-1)?.records;
  mutations = () => this.rt.calls.filter((c) => !READS.has(c.method));

  makeApp(name = 'web', fields: Partial<AppRow> = {}): AppRow {
    return createApp(this.db, this.enqueue, { name, imageRef: 'web:1', fallbackPort: 8080, healthCheckPath: '/healthz', ...fields }, 'rest');
  }

  deploy(imageRef: string | null, trigger: DeployTrigger = 'manual', name = 'web') {
    return createDeploy(this.db, this.enqueue, this.bus, { appId: this.app(name).id, appName: name, imageRef, trigger });
  }

  /**
   * Runs the key as the work queue would: again after `requeueAfterMs` (moving the fake time by it), or at
   * once when the pass enqueued its own key; stops when a pass asks for neither. Bounded.
   */
  async drive(name = 'web', opts: { until?: () => boolean; max?: number } = {}): Promise<Pass[]> {
    const passes: Pass[] = [];
    for (let i = 0; i < (opts.max ?? 2_000); i++) {
      if (opts.until?.()) return passes;
      const before = this.enqueue.keys.length;
      const result = await this.rec.reconcile(name);
      passes.push({ at: this.now, result });
      const self = this.enqueue.keys.slice(before).includes(`app:${name}`);
      if (result.requeueAfterMs !== undefined) this.now += result.requeueAfterMs;
      else if (!self && !opts.until) return passes;
    }
    throw new Error(`app ${name} did not settle`);
  }

  /**
   * A successful deploy of `imageRef` (the first one creates the app), driven until it succeeded and the
   * version it replaced has drained (issue 37: the deploy succeeds at the switch, the drain ends later).
   */
  async deployed(imageRef = 'web:1') {
    if (!getAppByName(this.db, 'web')) this.makeApp();
    const d = this.deploy(imageRef);
    await this.drive(undefined, { until: () => this.dep(d.id).status === 'success' && this.dep(d.id).drainUntil === null });
    return d;
  }

  /**
   * DESIGN.md rule 2: one more pass changes nothing and makes no engine call but reads; nor does it sync
   * DNS (rule 7), except for a deleted app, whose pass always re-syncs (the sync itself writes only changes).
   */
  async expectSteady(name = 'web', opts: { dnsSyncs?: boolean } = {}) {
    const snapshot = () => ({
      app: this.db.select().from(apps).where(eq(apps.name, name)).get(),
      status: this.db.select().from(appStatus).all(),
      replicas: this.db.select().from(appInstances).all(),
      deploys: this.db.select().from(deploys).orderBy(asc(deploys.id)).all(),
      deployEvents: this.db.select().from(deployEvents).all(),
      appEvents: this.db.select().from(appEvents).all(),
      containers: [...this.rt.containers.values()].map((c) => [c.spec.name, c.state, c.address]),
      dns: this.dnsNow(),
    });
    const before = snapshot();
    const calls = this.rt.calls.length;
    const syncs = this.dnsCalls.length;
    const result = await this.rec.reconcile(name);
    expect(result).toEqual({});
    if (!opts.dnsSyncs) expect(this.dnsCalls.length).toBe(syncs);
    expect(this.rt.calls.slice(calls).filter((c) => !READS.has(c.method))).toEqual([]);
    expect(snapshot()).toEqual(before);
  }
}
