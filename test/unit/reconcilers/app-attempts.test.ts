// Deploys that can never finish must end `failed` with a reason instead of taking the daemon down at every
// start: an image reference outside the engine grammar held in the database (written before validation
// existed), and a step that kills every process that runs it (bounded by attempts.ts).
import { describe, it, expect, beforeEach } from 'vitest';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { silentLogger } from '../../../src/log.js';
import { Bus } from '../../../src/controller/bus.js';
import { createAppReconciler } from '../../../src/reconcilers/app/reconciler.js';
import { MAX_STEP_STARTS } from '../../../src/reconcilers/app/attempts.js';

import { createDeploy, getDeploy, listDeployEvents } from '../../../src/store/deploys.js';
import { deployEnv } from '../../../src/store/deploy-env.js';
import { missingRequired } from '../../../src/store/env.js';
import { deploys } from '../../../src/store/schema/index.js';
import type { Reconciler } from '../../../src/controller/types.js';
import type { Db } from '../../../src/store/db.js';
import { createApp } from '../../support/commands.js';

const sealer = testSealer();
let db: Db;
let rt: FakeRuntime;
let now: number;

/** One daemon process's app reconciler (its own memory); `probe` answers the health check. */
function daemon(probe: () => number | undefined = () => 200): Reconciler {
  return createAppReconciler({
    db,
    bus: new Bus(),
    runtime: rt,
    sealer,
    log: silentLogger,
    enqueue: recordingEnqueue(),
    dns: { sync: async () => {} },
    proxy: { upstreamRequests: async () => new Map() },
    env: { resolve: (id) => deployEnv(db, sealer, id), missingRequired: (id) => missingRequired(db, id) },
    probe: async () => probe(),
    now: () => now,
    settings: { network: 'svc-unit', instance: 'svc', dataDir: '/nonexistent-svc-unit', healthTimeoutMs: 30_000, dnsRefreshMs: 1_000, stopGraceSeconds: 10, watchMs: 0 },
  });
}

beforeEach(() => {
  db = memoryDb();
  now = Date.parse('2026-01-01T00:00:00Z');
  rt = new FakeRuntime({ images: ['web:1'], now: () => now });
});

const newApp = () => createApp(db, recordingEnqueue(), { name: 'web', imageRef: 'web:1', fallbackPort: 8080 }, 'rest');

/** Passes until the deploy is final (bounded). */
async function settle(rec: Reconciler, id: number) {
  for (let i = 0; i < 50 && ['pending', 'running'].includes(getDeploy(db, id)!.status); i++) {
    const r = await rec.reconcile('web');
    now += r.requeueAfterMs ?? 0;
  }
  return getDeploy(db, id)!;
}

describe('deploys that cannot succeed end failed', () => {
  it('an invalid image reference held in the database fails at validate and never reaches the engine', async () => {
    const app = newApp();
    const d = createDeploy(db, recordingEnqueue(), undefined, { appId: app.id, appName: 'web', imageRef: 'web:1', trigger: 'manual' });
    db.update(deploys).set({ imageRef: '../web' }).run(); // as an old daemon stored it
    const done = await settle(daemon(), d.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/"\.\.\/web" is not valid/);
    expect(listDeployEvents(db, d.id).at(-1)).toMatchObject({ step: 'validate', level: 'error' });
    expect(rt.callsOf('hasImage')).toEqual([]);
    expect(rt.callsOf('pull')).toEqual([]);
    expect(rt.callsOf('run')).toEqual([]);
  });

  it(`a step that stops every daemon running it is begun ${MAX_STEP_STARTS} times, then the deploy ends failed`, async () => {
    const app = newApp();
    const d = createDeploy(db, recordingEnqueue(), undefined, { appId: app.id, appName: 'web', imageRef: 'web:2', trigger: 'manual' });
    let pulls = 0;
    rt.pull = async () => {
      pulls++;
      return new Promise<void>(() => {}); // the process dies here: this promise never settles
    };
    for (let process = 1; process <= MAX_STEP_STARTS; process++) {
      const rec = daemon();
      // The first pass runs on from the begin into pull (0044); later ones enter it at once. It never returns.
      void rec.reconcile('web');
      for (let i = 0; i < 100 && getDeploy(db, d.id)!.stepAttempts !== process; i++) await new Promise((r) => setTimeout(r, 5));
      expect(getDeploy(db, d.id)).toMatchObject({ status: 'running', step: 'pull', attemptStep: 'pull', stepAttempts: process });
    }
    expect(pulls).toBe(MAX_STEP_STARTS);
    const done = await settle(daemon(), d.id);
    expect(pulls).toBe(MAX_STEP_STARTS);
    expect(done.status).toBe('failed');
    expect(done.error).toContain(`step pull was begun ${MAX_STEP_STARTS} times`);
    expect(listDeployEvents(db, d.id).at(-1)).toMatchObject({ step: 'pull', level: 'error' });
  });

  it('waiting in one step costs one count per process, and a finished step does not count against the next', async () => {
    const app = newApp();
    const d = createDeploy(db, recordingEnqueue(), undefined, { appId: app.id, appName: 'web', imageRef: 'web:1', trigger: 'manual' });
    let answer: number | undefined; // the staging container does not answer yet: health_check requeues
    const first = daemon(() => answer);
    for (let i = 0; i < 20 && getDeploy(db, d.id)!.step !== 'health_check'; i++) await first.reconcile('web');
    for (let i = 0; i < 5; i++) now += (await first.reconcile('web')).requeueAfterMs ?? 0;
    expect(getDeploy(db, d.id)).toMatchObject({ step: 'health_check', attemptStep: 'health_check', stepAttempts: 1 });
    answer = 200;
    const done = await settle(daemon(), d.id); // a restarted daemon resumes the wait and finishes
    expect(done.error).toBeNull();
    expect(done.status).toBe('success');
    expect(done).toMatchObject({ attemptStep: 'finalize', stepAttempts: 1 });
  });
});
