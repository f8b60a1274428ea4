// The jobs reconciler on the fake engine and a real :memory: SQLite, its clock driven by hand: a due time
// starts one container of the live release (never `svc.app`, never routed), its exit is recorded with the
// output and the failure reported as an app event, a timeout stops it, and a pass with nothing due changes
// nothing (rule 2).
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { AppHarness } from '../../support/app-harness.js';
import { silentLogger } from '../../../src/log.js';
import { createJobsReconciler } from '../../../src/reconcilers/jobs/reconciler.js';
import { LABELS } from '../../../src/runtime/runtime.js';
import { appEvents, apps, jobRuns } from '../../../src/store/schema/index.js';
import { canonicalJobs } from '../../../src/desired/workload-fields.js';
import { createChannel } from '../../../src/desired/notify.js';
import { notifyOutbox } from '../../../src/store/schema/index.js';
import { commandCtx } from '../../support/commands.js';

async function setup(job: { command: string | string[]; timeout_seconds?: number }) {
  const h = new AppHarness();
  await h.deployed('web:1');
  h.db.update(apps).set({ jobs: canonicalJobs([{ name: 'j', schedule: '*/5 * * * *', timeout_seconds: 60, concurrency: 'forbid', ...job }]) }).where(eq(apps.name, 'web')).run();
  h.now = Date.parse('2026-01-01T00:00:30Z');
  const rec = createJobsReconciler({
    db: h.db, bus: h.bus, runtime: h.rt, sealer: h.sealer, log: silentLogger,
    env: { resolve: () => ({ env: {}, secrets: ['hunter22'] }) },
    now: () => h.now,
    settings: { network: 'svc-unit', instance: 'svc', dataDir: '/nonexistent-svc-unit', stopGraceSeconds: 10 },
  });
  const runs = () => h.db.select().from(jobRuns).all();
  const runContainers = () => [...h.rt.containers.values()].filter((c) => c.spec.labels[LABELS.role] === 'job');
  return { h, rec, runs, runContainers };
}

describe('jobs reconciler', () => {
  it('runs a due time in the live image, records the exit and the output, reports a failure; steady otherwise', async () => {
    const { h, rec, runs, runContainers } = await setup({ command: ['migrate', '--now'] });
    createChannel(commandCtx(h.db), { name: 'hook', type: 'webhook', events: ['job_failed', 'job_recovered'], config: { url: 'http://127.0.0.1:9/in' } }, 'api');
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 270_000 });
    const calls = h.rt.calls.length;
    expect(await rec.reconcile('web')).toEqual({ requeueAfterMs: 270_000 });
    expect(h.rt.calls.slice(calls).map((c) => c.method)).toEqual(['list']); // nothing due: a read

    h.now = Date.parse('2026-01-01T00:05:01Z');
    await rec.reconcile('web');
    const [c] = runContainers();
    expect(c.spec).toMatchObject({ image: 'web:1', entrypoint: ['migrate'], cmd: ['--now'], network: 'svc-unit' });
    expect(c.spec.labels[LABELS.app]).toBeUndefined();
    expect(runs()[0]).toMatchObject({ status: 'running', trigger: 'schedule', scheduledFor: '2026-01-01T00:05:00.000Z' });

    h.rt.log(c.spec.name, 'migrating');
    h.rt.log(c.spec.name, 'password=hunter22', 'stderr');
    h.rt.kill(c.spec.name, 2);
    await rec.reconcile('web');
    expect(runs()[0]).toMatchObject({ status: 'failed', exitCode: 2, output: 'migrating\npassword=[redacted]\n', error: 'exited with code 2' });
    expect(runContainers()).toEqual([]);
    expect(h.db.select().from(appEvents).all().filter((e) => e.step === 'job').map((e) => e.level)).toEqual(['error']);
    // One notification (the storm rule), and the next success closes it with one `job_recovered`.
    expect(h.db.select().from(notifyOutbox).all().map((m) => [m.event, m.subject])).toEqual([['job_failed', 'web: job j failed']]);
    h.now = Date.parse('2026-01-01T00:10:01Z');
    await rec.reconcile('web');
    h.rt.kill(runContainers()[0].spec.name, 0);
    await rec.reconcile('web');
    expect(h.db.select().from(notifyOutbox).all().map((m) => m.event)).toEqual(['job_failed', 'job_recovered']);
  });

  it('stops a run at its timeout and records it timed_out', async () => {
    const { h, rec, runs, runContainers } = await setup({ command: 'sleep 1000', timeout_seconds: 60 });
    await rec.reconcile('web');
    h.now = Date.parse('2026-01-01T00:05:01Z');
    await rec.reconcile('web');
    expect(runContainers()[0].spec).toMatchObject({ entrypoint: ['sh'], cmd: ['-c', 'sleep 1000'] });
    h.now += 61_000;
    await rec.reconcile('web');
    expect(runs()[0]).toMatchObject({ status: 'timed_out', error: 'timed out' });
    expect(runContainers()).toEqual([]);
  });

  it('a run after the network was removed starts on the network made again, in the image the live deploy pinned', async () => {
    const { h, rec, runs, runContainers } = await setup({ command: ['report'] });
    const pinned = `sha256:${'c'.repeat(64)}`;
    h.rt.setImageId('web:1', pinned);
    const live = await h.deployed('web:1'); // pinned to c...
    h.rt.setImageId('web:1', `sha256:${'d'.repeat(64)}`); // the tag moved since
    h.rt.removeNetwork('svc-unit');
    await rec.reconcile('web');
    h.now = Date.parse('2026-01-01T00:05:01Z');
    await rec.reconcile('web');
    expect(h.dep(live.id).imagePin).toBe(pinned);
    expect(runs()[0]).toMatchObject({ status: 'running', image: 'web:1' });
    expect(runContainers()[0]).toMatchObject({ state: 'running', spec: { image: pinned, network: 'svc-unit' } });
    expect(h.rt.networks.has('svc-unit')).toBe(true);
  });
});

