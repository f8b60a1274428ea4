// The jobs reconciler (issue 22), key `jobs:<app>`: runs an app's scheduled jobs and one-off commands as
// one-off containers of its live release (image and variables of the live deploy, its links' variables,
// its volumes, its limits), on the svc network and never routed (no DNS answer, not `svc.app`). A pass
// observes the app's open runs and their containers, asks plan.ts what to do, does it, and requeues for the
// next cron time or timeout; a container's `die` wakes it at once (event-keys.ts). Time comes from
// `deps.now`, so tests drive schedules with an injected clock.
import type { Reconciler, Result } from '../../controller/types.js';
import type { Bus } from '../../controller/bus.js';
import type { Sealer } from '../../crypto.js';
import type { Logger } from '../../log.js';
import { LABELS, type ContainerSpec, type Runtime } from '../../runtime/runtime.js';
import type { Db } from '../../store/db.js';
import { getAppByName } from '../../store/apps.js';
import { getDeploy } from '../../store/deploys.js';
import { apps, type JobRunRow } from '../../store/schema/index.js';
import type { AppView } from '../../store/app-view.js';
import { appsWithOpenRuns, dropTicksExcept, getJobRun, insertJobRun, openRuns, pruneRuns, setTick, ticksOf, updateJobRun } from '../../store/jobs.js';
import { argvOf, parseJobs } from '../../desired/workload-fields.js';
import { planJobs, type JobAction, type OpenRun } from '../../jobs/plan.js';
import { collectOutput } from '../../jobs/output.js';
import { reportFailedJobRun, reportSucceededJobRun } from '../../jobs/report.js';
import { ensureAppVolumes, stackAttachments, stackSpecOf, volumeMounts } from '../app/container-spec.js';
import { redact } from '../restart.js';
import { ne } from 'drizzle-orm';

export interface JobsReconcilerDeps {
  db: Db;
  bus: Bus;
  runtime: Runtime;
  sealer: Sealer;
  log: Logger;
  /** The app's secrets, to keep them out of a recorded error (the run's variables are the live deploy's snapshot). */
  env: { resolve(appId: number): { env: Record<string, string>; secrets: string[] } };
  /** Injectable: integration tests move it to fire schedules without waiting. */
  now: () => number;
  settings: { network: string; instance: string; dataDir: string; stopGraceSeconds: number };
}

export const jobContainerName = (instance: string, app: string, runId: number) => `${instance}-${app}-run-${runId}`;

export function createJobsReconciler(deps: JobsReconcilerDeps): Reconciler {
  const { db, runtime, settings } = deps;
  const iso = () => new Date(deps.now()).toISOString();
  const ours = (app: string) => ({ [LABELS.managed]: 'true', [LABELS.instance]: settings.instance, [LABELS.role]: 'job', [LABELS.jobApp]: app });
  const changed = (runId: number) => deps.bus.emit('jobRun', runId);

  async function reconcile(name: string): Promise<Result> {
    const app = getAppByName(db, name);
    const containers = await runtime.list(ours(name));
    if (!app) {
      // The app is gone (its runs went with it): so do their containers.
      for (const c of containers) await runtime.remove(c.id);
      return {};
    }
    const open = openRuns(db, app.id);
    const openIds = new Set(open.map((r) => String(r.id)));
    for (const c of containers) if (!openIds.has(c.labels[LABELS.jobRun] ?? '')) await runtime.remove(c.id); // leftovers
    const byRun = new Map(containers.map((c) => [c.labels[LABELS.jobRun], c]));
    const facts: OpenRun[] = open.map((r) => {
      const c = byRun.get(String(r.id));
      return {
        id: r.id,
        job: r.job,
        status: r.status as 'pending' | 'running',
        startedAtMs: r.startedAt ? Date.parse(r.startedAt) : null,
        timeoutSeconds: r.timeoutSeconds,
        container: r.status !== 'running' ? undefined : !c ? 'missing' : c.running ? 'running' : 'exited',
      };
    });
    const jobs = parseJobs(app.jobs);
    dropTicksExcept(db, app.id, jobs.map((j) => j.name));
    const plan = planJobs(jobs, ticksOf(db, app.id), facts, deps.now());
    for (const a of plan.actions) await act(app, a);
    if (plan.actions.some((a) => a.kind === 'finish' || a.kind === 'timeout' || a.kind === 'skip')) pruneRuns(db, app.id);
    return plan.wakeAfterMs === undefined ? {} : { requeueAfterMs: plan.wakeAfterMs };
  }

  async function act(app: AppView, a: JobAction): Promise<void> {
    switch (a.kind) {
      case 'tick':
        return setTick(db, app.id, a.job, a.at);
      case 'create': {
        const job = parseJobs(app.jobs).find((j) => j.name === a.job)!;
        const run = insertJobRun(db, { appId: app.id, job: job.name, trigger: a.trigger, status: 'pending', command: argvOf(job.command), timeoutSeconds: job.timeout_seconds, scheduledFor: a.scheduledFor, createdAt: iso() });
        return start(app, run);
      }
      case 'skip': {
        if (a.runId !== undefined) updateJobRun(db, a.runId, { status: 'skipped', error: a.reason, finishedAt: iso() });
        else insertJobRun(db, { appId: app.id, job: a.job, trigger: a.trigger, status: 'skipped', command: [], timeoutSeconds: 0, scheduledFor: a.scheduledFor, error: a.reason, createdAt: iso(), finishedAt: iso() });
        deps.log.info('job run skipped', { app: app.name, job: a.job, reason: a.reason });
        if (a.runId !== undefined) changed(a.runId);
        return;
      }
      case 'start':
        return start(app, getJobRun(db, a.runId)!);
      case 'cancel':
        return end(app, a.runId, 'cancelled', a.reason, true);
      case 'timeout':
        return end(app, a.runId, 'timed_out', 'timed out', true);
      case 'finish':
        return end(app, a.runId, undefined, undefined, false);
    }
  }

  /** Starts a recorded run in the live release; a run that cannot start is failed with the reason. */
  async function start(app: AppView, run: JobRunRow): Promise<void> {
    const deploy = app.currentDeployId === null ? undefined : getDeploy(db, app.currentDeployId);
    if (!deploy?.imageRef || !deploy.envSnapshotSealed) {
      updateJobRun(db, run.id, { status: 'failed', error: 'the app has no live deploy: nothing to run the command in', finishedAt: iso() });
      if (run.job) reportFailedJobRun(deps, app, { ...run, status: 'failed' }, 'could not start: the app has no live deploy', deps.now());
      return changed(run.id);
    }
    const env = deps.sealer.openJson<Record<string, string>>(deploy.envSnapshotSealed);
    const name = jobContainerName(settings.instance, app.name, run.id);
    const [program, ...args] = run.command;
    const spec: ContainerSpec = {
      name,
      image: deploy.imageRef,
      env,
      network: settings.network,
      init: true,
      // Exactly the argument array: the image's ENTRYPOINT is replaced (a string command is `sh -c`).
      entrypoint: [program!],
      cmd: args,
      mounts: volumeMounts(settings.dataDir, app),
      resources: { memoryMb: app.memoryMb, cpus: app.cpus },
      labels: { ...ours(app.name), [LABELS.jobRun]: String(run.id) },
    };
    // A stack service's job joins its stack (networks, volumes) as the service's containers do.
    const stack = stackSpecOf(deps.sealer, deploy);
    if (stack) Object.assign(spec, stackAttachments(settings, stack, spec.mounts ?? []));
    try {
      ensureAppVolumes(settings, app, stack);
      await runtime.remove(name); // a half-made one of an interrupted pass
      await runtime.ensureNetwork(settings.network);
      await runtime.run(spec);
      updateJobRun(db, run.id, { status: 'running', containerName: name, image: deploy.imageRef, startedAt: iso() });
    } catch (err) {
      const message = redact(err instanceof Error ? err.message : String(err), deps.env.resolve(app.id).secrets);
      await runtime.remove(name).catch(() => {});
      updateJobRun(db, run.id, { status: 'failed', error: `could not start: ${message}`, finishedAt: iso() });
      if (run.job) reportFailedJobRun(deps, app, run, `could not start: ${message}`, deps.now());
    }
    changed(run.id);
  }

  /** Records how a run ended (its exit code and output), stopping it first when asked, then removes its container. */
  async function end(app: AppView, runId: number, status: 'cancelled' | 'timed_out' | undefined, reason: string | undefined, stop: boolean): Promise<void> {
    const run = getJobRun(db, runId)!;
    const name = run.containerName ?? jobContainerName(settings.instance, app.name, run.id);
    if (stop) await runtime.stop(name, settings.stopGraceSeconds);
    const info = await runtime.inspect(name);
    // Stored in the database (and its backups) in clear: the app's secret values are masked, as in events.
    const output = info ? redact(await collectOutput(runtime, name).catch(() => ''), deps.env.resolve(app.id).secrets) : '';
    const exitCode = info && !info.running ? (info.exitCode ?? null) : null;
    const final = status ?? (!info ? 'failed' : exitCode === 0 ? 'succeeded' : 'failed');
    const error = reason ?? (!info ? 'its container disappeared' : exitCode === 0 ? null : `exited with code ${exitCode}`);
    updateJobRun(db, runId, { status: final, exitCode, output, error, finishedAt: iso() });
    await runtime.remove(name);
    changed(runId);
    deps.log.info('job run ended', { app: app.name, job: run.job, run: runId, status: final, exit_code: exitCode });
    if (run.job && (final === 'failed' || final === 'timed_out')) reportFailedJobRun(deps, app, run, error ?? final, deps.now());
    if (run.job && final === 'succeeded') reportSucceededJobRun(deps, app, run, deps.now());
  }

  return {
    kind: 'jobs',
    reconcile,
    // Apps with jobs or open runs, and any app a run container of ours names (its app may be gone).
    async listNames() {
      const names = new Set(db.select({ name: apps.name }).from(apps).where(ne(apps.jobs, '[]')).all().map((a) => a.name));
      const withOpen = new Set(appsWithOpenRuns(db));
      for (const a of db.select({ id: apps.id, name: apps.name }).from(apps).all()) if (withOpen.has(a.id)) names.add(a.name);
      for (const c of await runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: settings.instance, [LABELS.role]: 'job' })) {
        if (c.labels[LABELS.jobApp]) names.add(c.labels[LABELS.jobApp]);
      }
      return [...names];
    },
  };
}
