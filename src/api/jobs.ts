// Scheduled jobs and one-off commands (issue 22, API.md "Jobs and one-off commands"). Handlers record runs
// through the jobs commands; the jobs reconciler starts them. `POST /apps/{id}/run` then follows the run's
// container output (a read, like the log stream) as Server-Sent Events and ends with its exit status.
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { notFound } from '../errors.js';
import { runJobNow, startOneOff } from '../desired/jobs.js';
import { parseJobs } from '../desired/workload-fields.js';
import { getApp } from '../store/apps.js';
import { getJobRun, listRuns } from '../store/jobs.js';
import type { JobRunRow } from '../store/schema/index.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { jobRunJson } from '../presenters/jobs.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { jobRunJsonSchema, jobRunWithOutputJsonSchema } from '../presenters/jobs.js';
import { jobSchema } from '../desired/workload-fields.js';
import { oneOffSchema } from '../desired/jobs.js';

const op = operations('Jobs');

const KEEPALIVE_MS = 15_000;
const finished = (r: JobRunRow | undefined) => (r && r.status !== 'pending' && r.status !== 'running' ? r : undefined);

export function jobRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const app = (id: number) => getApp(db, id) ?? (() => { throw notFound('app'); })();

  r.get('/apps/:appID/jobs', op({ summary: "The app's scheduled jobs with their last run", response: z.array(jobSchema.extend({ last_run: jobRunJsonSchema.nullable() })) }), (c) => {
    const a = app(idParam(c, 'appID', 'app'));
    return c.json(parseJobs(a.jobs).map((j) => ({ ...j, last_run: listRuns(db, a.id, j.name, 1).map((x) => jobRunJson(x))[0] ?? null })));
  });

  r.get('/apps/:appID/jobs/:job/runs', op({ summary: "A job's runs, newest first", response: z.array(jobRunJsonSchema) }), (c) => {
    const a = app(idParam(c, 'appID', 'app'));
    const job = c.req.param('job');
    if (!parseJobs(a.jobs).some((j) => j.name === job) && listRuns(db, a.id, job, 1).length === 0) throw notFound('job');
    return c.json(listRuns(db, a.id, job).map((x) => jobRunJson(x)));
  });

  r.post('/apps/:appID/jobs/:job/runs', op({ summary: 'Run a job now', status: 202, response: jobRunJsonSchema, errors: { 409: 'no_live_deploy, or a run is going (concurrency forbid)' } }), (c) => {
    const run = runJobNow(deps, idParam(c, 'appID', 'app'), c.req.param('job'), restOrigin(c));
    return c.json(jobRunJson(run), 202);
  });

  r.get('/apps/:appID/runs', op({ summary: "The app's runs (jobs and one-off commands), newest first", response: z.array(jobRunJsonSchema) }), (c) => {
    const a = app(idParam(c, 'appID', 'app'));
    return c.json(listRuns(db, a.id, null).map((x) => jobRunJson(x)));
  });

  r.get('/apps/:appID/runs/:runID', op({ summary: 'One run with its output', response: jobRunWithOutputJsonSchema }), (c) => {
    const a = app(idParam(c, 'appID', 'app'));
    const run = getJobRun(db, idParam(c, 'runID', 'run'));
    if (!run || run.appId !== a.id) throw notFound('run');
    return c.json(jobRunJson(run, true));
  });

  r.post('/apps/:appID/run', op({ summary: 'Run a one-off command in the app\'s release: its output as Server-Sent Events, or 202 with ?detach=true', body: oneOffSchema, query: { detach: 'true: answer 202 with the run at once' }, media: { type: 'text/event-stream', description: 'output lines, then the run (JobRun JSON) in a done event' }, errors: { 409: 'no_live_deploy' } }), async (c) => {
    const run = startOneOff(deps, idParam(c, 'appID', 'app'), await jsonBody(c), restOrigin(c));
    if (['true', '1', 'yes'].includes(c.req.query('detach') ?? '')) return c.json(jobRunJson(run), 202);
    const runtime = deps.runtime;
    return streamSSE(c, async (stream) => {
      const gone = new AbortController();
      stream.onAbort(() => gone.abort());
      const keepalive = setInterval(() => void stream.write(': keepalive\n\n').catch(() => {}), KEEPALIVE_MS);
      try {
        await stream.writeSSE({ event: 'run', data: JSON.stringify({ run_id: run.id }) });
        const started = await deps.bus.until('jobRun', () => { const x = getJobRun(db, run.id); return x && x.status !== 'pending' ? x : undefined; }, gone.signal);
        let streamed = false;
        if (started?.status === 'running' && started.containerName && runtime) {
          try {
            for await (const line of runtime.logs(started.containerName, { follow: true, signal: gone.signal })) {
              streamed = true;
              await stream.writeSSE({ event: line.stream, data: line.line });
            }
          } catch {
            // Removed before we attached: the recorded output is sent below.
          }
        }
        const done = await deps.bus.until('jobRun', () => finished(getJobRun(db, run.id)), gone.signal);
        if (!done) return; // the caller left; the run goes on and is recorded
        if (!streamed && done.output) for (const line of done.output.replace(/\n$/, '').split('\n')) await stream.writeSSE({ event: 'stdout', data: line });
        await stream.writeSSE({ event: 'exit', data: JSON.stringify({ run_id: done.id, status: done.status, exit_code: done.exitCode, error: done.error }) });
      } finally {
        clearInterval(keepalive);
      }
    });
  });
  return r;
}
