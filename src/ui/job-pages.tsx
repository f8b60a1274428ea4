/** @jsxImportSource hono/jsx */
// The job editor and the job history pages (issue 22): add, edit and remove an app's scheduled jobs, see
// the next times a schedule fires, run a job now, read each run's output. Every write is the apps command
// that `PUT /api/apps/{id} {jobs}` calls, given the whole list with the edited job last, and "Run now" is
// the command of `POST /api/apps/{id}/jobs/{job}/runs`: the same rules and the same refusals as the API.
// A rename in the editor moves the job's history with it (saveJob).
import { Hono, type Context } from 'hono';
import { mayUse } from '../auth/permissions.js';
import { updateApp } from '../desired/apps.js';
import { runJobNow, saveJob } from '../desired/jobs.js';
import { parseJobs, type Job } from '../desired/workload-fields.js';
import { DomainError, notFound } from '../errors.js';
import { statusOf as httpStatus } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { previewSchedule, type SchedulePreview } from '../jobs/preview.js';
import { getApp } from '../store/apps.js';
import type { AppView } from '../store/app-view.js';
import { getJobRun, listRuns } from '../store/jobs.js';
import { done, flash, readForm, render, type UiDeps, type UiEnv } from './context.js';
import { formError } from './field-errors.js';
import { commandText, JobFields, jobFieldErrors, jobOfForm, NextRuns, valuesOfJob, valuesOfJobForm, type JobFieldErrors, type JobFormValues } from './job-form.js';
import { Csrf, Layout, PostButton, Time } from './layout.js';
import { duration, jobUrl, RunHistory, RunStatus } from './run-history.js';

type Status = 200 | 400 | 403 | 404 | 409 | 413 | 422 | 500;
const statusOf = (err: unknown): Status => {
  const s = httpStatus(err);
  return s === 401 || s === 429 || s === 503 ? 500 : s;
};
/** A refusal the page can show (4xx of a command); anything else goes to the error page. */
const shown = (err: unknown): err is DomainError => err instanceof DomainError && statusOf(err) !== 500;


interface EditorState {
  /** The job being edited; null: a new one. */
  original: string | null;
  values: JobFormValues;
  errors?: JobFieldErrors;
  error?: string;
  preview?: SchedulePreview;
  status?: Status;
}

export function jobPages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;
  const appOf = (id: number): AppView => getApp(db, id) ?? (() => { throw notFound('app'); })();
  const jobOf = (app: AppView, name: string): Job => parseJobs(app.jobs).find((j) => j.name === name) ?? (() => { throw notFound('job'); })();
  const preview = (schedule: string | undefined) => (schedule?.trim() ? previewSchedule(schedule, deps.now().getTime()) : undefined);

  const editor = (c: Context<UiEnv>, app: AppView, s: EditorState) => {
    const action = s.original === null ? `/apps/${app.id}/jobs` : jobUrl(app.id, s.original);
    return render(
      c,
      <Layout title={s.original === null ? `New job of ${app.name}` : `Edit job ${s.original} of ${app.name}`} csrf={c.var.csrf} user={c.var.user} error={s.error}>
        <p>
          <a href={`/apps/${app.id}/jobs`}>Back to {app.name}</a>
        </p>
        <form method="post" action={action} class="stack" novalidate>
          <Csrf token={c.var.csrf} />
          <JobFields v={s.values} errors={s.errors ?? {}} preview={s.preview} previewUrl={`/apps/${app.id}/next-runs`} />
          <div class="actions">
            {/* First in the form: Enter in a field saves. */}
            <button type="submit">{s.original === null ? 'Add job' : 'Save job'}</button>
            {/* Without JavaScript too: the same form posted with `preview` shows the next times, saves nothing. */}
            <button type="submit" class="secondary" name="preview" value="1">
              Show next runs
            </button>
            <a href={`/apps/${app.id}/jobs`}>Cancel</a>
          </div>
        </form>
        <p class="muted">
          Each run is a one-off container of the app's live image with its variables, links and volumes; its output and exit code are kept (the last
          64 KiB). Saving changes the app's <code>jobs</code>, as <code>PUT /api/apps/{app.id}</code> does.
        </p>
      </Layout>,
      s.status ?? 200,
    );
  };

  /** Writes the app's jobs with the edited one last (`original`: the one it replaces), or shows the refusal. */
  const save = async (c: Context<UiEnv>, original: string | null) => {
    const id = idParam(c, 'id', 'app');
    const form = await readForm(c, deps);
    const app = appOf(id);
    if (original !== null) jobOf(app, original);
    if (form.preview) return editor(c, app, { original, values: valuesOfJobForm(form), preview: preview(form.schedule) ?? { ok: false, problem: 'is empty' } });
    const others = parseJobs(app.jobs).filter((j) => j.name !== original);
    try {
      saveJob(deps, id, original, jobOfForm(form), 'ui');
      return done(c, `/apps/${id}/jobs`, 'job_saved');
    } catch (err) {
      if (!shown(err)) throw err;
      const { fields, other } = jobFieldErrors(err, others.length);
      // The sentences in role="alert" as every form says them, and each under its field.
      const error = [...Object.values(fields), ...other].join('; ') || formError(err);
      return editor(c, app, { original, values: valuesOfJobForm(form), errors: fields, error, preview: preview(form.schedule), status: statusOf(err) });
    }
  };

  // Not under /jobs/: any job name (`new` included) is a job's page there.
  r.get('/apps/:id/add-job', (c) => editor(c, appOf(idParam(c, 'id', 'app')), { original: null, values: {} }));
  r.post('/apps/:id/jobs', (c) => save(c, null));

  // The script's live preview: the fragment `#next-runs` for `?schedule=` (computes; reads nothing of the app).
  r.get('/apps/:id/next-runs', (c) => {
    appOf(idParam(c, 'id', 'app'));
    c.header('cache-control', 'no-store');
    return c.html(String(<NextRuns preview={preview(c.req.query('schedule')) ?? { ok: false, problem: 'is empty' }} />));
  });

  r.get('/apps/:id/jobs/:job/edit', (c) => {
    const app = appOf(idParam(c, 'id', 'app'));
    const job = jobOf(app, c.req.param('job'));
    return editor(c, app, { original: job.name, values: valuesOfJob(job), preview: preview(job.schedule) });
  });
  r.post('/apps/:id/jobs/:job', (c) => save(c, c.req.param('job')));

  r.post('/apps/:id/jobs/:job/delete', async (c) => {
    const id = idParam(c, 'id', 'app');
    await readForm(c, deps);
    const app = appOf(id);
    const job = jobOf(app, c.req.param('job'));
    updateApp(deps, id, { jobs: parseJobs(app.jobs).filter((j) => j.name !== job.name) }, 'ui');
    return done(c, `/apps/${id}/jobs`, 'job_removed');
  });

  const jobPage = (c: Context<UiEnv>, app: AppView, name: string, o: { error?: string; status?: Status } = {}) => {
    const job = parseJobs(app.jobs).find((j) => j.name === name);
    const runs = listRuns(db, app.id, name);
    if (!job && runs.length === 0) throw notFound('job');
    const open = runs.some((x) => x.status === 'pending' || x.status === 'running');
    // Offer only the actions this user's role allows on this app (the routes check again).
    const may = (route: string) => mayUse(c.var.user, route, app.name);
    return render(
      c,
      <Layout title={`Job ${name} of ${app.name}`} csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error} refresh={open ? 3 : 0}>
        <p>
          <a href={`/apps/${app.id}/jobs`}>Back to {app.name}</a>
        </p>
        {job ? (
          <>
            <dl class="facts">
              <dt>Schedule</dt>
              <dd class="mono">{job.schedule} (UTC)</dd>
              <dt>Command</dt>
              <dd class="mono">{commandText(job.command)}</dd>
              <dt>Timeout</dt>
              <dd>{job.timeout_seconds} s</dd>
              <dt>Overlap</dt>
              <dd>{job.concurrency}</dd>
            </dl>
            <NextRuns preview={preview(job.schedule)} />
            <div class="actions spaced">
              {may('POST /apps/:id/jobs/:job/run') && <PostButton action={`${jobUrl(app.id, name)}/run`} csrf={c.var.csrf} label="Run now" context={name} />}
              {may('GET /apps/:id/jobs/:job/edit') && (
                <a class="button secondary" href={`${jobUrl(app.id, name)}/edit`}>
                  Edit<span class="sr"> {name}</span>
                </a>
              )}
              {may('POST /apps/:id/jobs/:job/delete') && (
                <PostButton action={`${jobUrl(app.id, name)}/delete`} csrf={c.var.csrf} label="Remove" context={name} tone="danger" />
              )}
            </div>
          </>
        ) : (
          <p class="muted">This job is no longer in the app's schedule; its history is kept.</p>
        )}
        <section id="job-runs" data-live aria-labelledby="h-runs">
          <h2 id="h-runs">History</h2>
          <RunHistory appId={app.id} runs={runs} label={`Runs of ${name}`} />
        </section>
      </Layout>,
      o.status ?? 200,
    );
  };

  r.get('/apps/:id/jobs/:job', (c) => jobPage(c, appOf(idParam(c, 'id', 'app')), c.req.param('job')));

  r.post('/apps/:id/jobs/:job/run', async (c) => {
    const id = idParam(c, 'id', 'app');
    await readForm(c, deps);
    const name = c.req.param('job');
    try {
      runJobNow(deps, id, name, 'ui');
      return done(c, jobUrl(id, name), 'job_run_queued');
    } catch (err) {
      if (!shown(err) || err.kind === 'not_found') throw err;
      return jobPage(c, appOf(id), name, { error: err.message, status: statusOf(err) });
    }
  });

  r.get('/apps/:id/runs/:runID', (c) => {
    const app = appOf(idParam(c, 'id', 'app'));
    const run = getJobRun(db, idParam(c, 'runID', 'run'));
    if (!run || run.appId !== app.id) throw notFound('run');
    const open = run.status === 'pending' || run.status === 'running';
    return render(
      c,
      <Layout title={`Run #${run.id} of ${app.name}`} csrf={c.var.csrf} user={c.var.user} refresh={open ? 2 : 0}>
        <p>
          <a href={`/apps/${app.id}/jobs`}>Back to {app.name}</a>
          {run.job && (
            <>
              {' · '}
              <a href={jobUrl(app.id, run.job)}>Job {run.job}</a>
            </>
          )}
        </p>
        <section id="run-record" data-live aria-label="Run">
          <dl class="facts">
            <dt>Job</dt>
            <dd class="mono">{run.job ?? 'one-off command'}</dd>
            <dt>Trigger</dt>
            <dd>{run.trigger}</dd>
            <dt>Status</dt>
            <dd>
              <RunStatus r={run} />
            </dd>
            <dt>Exit code</dt>
            <dd>{run.exitCode ?? '-'}</dd>
            <dt>Command</dt>
            <dd class="mono">{JSON.stringify(run.command)}</dd>
            <dt>Scheduled for</dt>
            <dd>
              <Time at={run.scheduledFor} />
            </dd>
            <dt>Started</dt>
            <dd>
              <Time at={run.startedAt} />
            </dd>
            <dt>Ended</dt>
            <dd>
              <Time at={run.finishedAt} />
            </dd>
            <dt>Took</dt>
            <dd>{duration(run)}</dd>
          </dl>
          <h2>Output</h2>
          {open ? (
            <p class="muted">The output is kept when the run ends (the last 64 KiB); this page refreshes until then.</p>
          ) : (
            <pre class="logs whole" role="log" aria-label="Output">
              {run.output || ''}
            </pre>
          )}
        </section>
      </Layout>,
    );
  });

  return r;
}

