// The job editor and history pages through the real hono app and store (issue 22): jobs are written by the
// apps command as PUT /api/apps/{id} {jobs} writes them, refusals are said under their fields and in
// role="alert", the schedule's next runs come from croner, "Run now" records a manual run, and each job's
// runs (start, end, exit code, output) are reachable.
import { beforeEach, describe, expect, it } from 'vitest';
import { getApp } from '../../../src/store/apps.js';
import { createDeploy } from '../../../src/store/deploys.js';
import { insertJobRun, listRuns, setTick, ticksOf } from '../../../src/store/jobs.js';
import { observeApp } from '../../../src/observed/apps.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient, roleText } from './form-client.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;
let id: number;

beforeEach(async () => {
  t = createTestApi();
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
  const res = await t.request('POST', '/api/apps', { name: 'jw', image_ref: 'svc-test/web:v1', access_mode: 'port', fallback_port: 18090 });
  expect(res.status).toBe(201);
  id = res.body.id;
});

const storedJobs = () => JSON.parse(getApp(t.db, id)!.jobs);
const nightly = { name: 'nightly', schedule: '0 3 * * *', command: 'echo hi && date', timeout_seconds: '600', concurrency: 'forbid' };
/** The sentence under the field whose input has this name. */
const underField = (html: string, name: string) => {
  const m = new RegExp(`name="${name}"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*name="${name}"`).exec(html);
  if (!m) return undefined;
  return /<span class="field-error" id="[^"]+">([^<]*)</.exec(html.slice(m.index))?.[1];
};

async function addNightly() {
  await b.get(`/apps/${id}/add-job`);
  const p = await b.post(`/apps/${id}/jobs`, nightly);
  expect(p.status, roleText(p.html, 'alert')).toBe(303);
  return p;
}

describe('job editor', () => {
  it('adds a job through the apps command; the app page lists it with its next run and actions', async () => {
    const form = await b.get(`/apps/${id}/add-job`);
    for (const label of ['Job name', 'Schedule', 'Command', 'Timeout (seconds)', 'If the previous run is still going']) expect(form.html, label).toContain(`>${label}</label>`);
    const p = await addNightly();
    expect(p.location).toBe(`/apps/${id}/jobs?m=job_saved`);
    expect(storedJobs()).toEqual([{ name: 'nightly', schedule: '0 3 * * *', command: 'echo hi && date', timeout_seconds: 600, concurrency: 'forbid' }]);
    expect(t.enqueue.keys).toContain('jobs:jw');
    // The API sees the job the UI wrote.
    expect((await t.request('GET', `/api/apps/${id}/jobs`)).body).toEqual([expect.objectContaining({ name: 'nightly', schedule: '0 3 * * *', last_run: null })]);
    const page = await b.follow(p);
    expect(roleText(page.html, 'status')).toBe('Job saved. Its schedule applies from now on.');
    // The test clock is 2026-01-01 00:00 UTC, a Thursday.
    expect(page.html).toContain('Thu 1 Jan 03:00 UTC, in 3 h');
    expect(page.html).toContain(`action="/apps/${id}/jobs/nightly/run"`);
    expect(page.html).toContain(`href="/apps/${id}/jobs/nightly/edit"`);
    expect(page.html).toContain(`href="/apps/${id}/add-job"`);
  });

  it('"Show next runs" previews the schedule with croner and saves nothing', async () => {
    await b.get(`/apps/${id}/add-job`);
    const p = await b.post(`/apps/${id}/jobs`, { ...nightly, schedule: '*/20 * * * *', preview: '1' });
    expect(p.status).toBe(200);
    expect(p.html).toContain('value="*/20 * * * *"');
    const runs = [...p.html.matchAll(/<time datetime="([^"]+)">([^<]+)<\/time>/g)].map((m) => [m[1], m[2]]);
    expect(runs).toEqual([
      ['2026-01-01T00:20:00.000Z', 'Thu 1 Jan 00:20 UTC, in 20 min'],
      ['2026-01-01T00:40:00.000Z', 'Thu 1 Jan 00:40 UTC, in 40 min'],
      ['2026-01-01T01:00:00.000Z', 'Thu 1 Jan 01:00 UTC, in 1 h'],
      ['2026-01-01T01:20:00.000Z', 'Thu 1 Jan 01:20 UTC, in 1 h 20 min'],
      ['2026-01-01T01:40:00.000Z', 'Thu 1 Jan 01:40 UTC, in 1 h 40 min'],
    ]);
    const bad = await b.post(`/apps/${id}/jobs`, { ...nightly, schedule: '61 * * * *', preview: '1' });
    expect(bad.html).toMatch(/No next runs: the schedule is not a valid cron expression/);
    expect(storedJobs()).toEqual([]);
    // The fragment the page's script fetches while the schedule is typed: the same element, the same words.
    expect(p.html).toContain(`data-next-runs="/apps/${id}/next-runs"`);
    const live = await b.get(`/apps/${id}/next-runs?schedule=${encodeURIComponent('@hourly')}`);
    expect(live.status).toBe(200);
    expect(live.html).toMatch(/^<div id="next-runs" aria-live="polite">/);
    expect(live.html).toContain('<time datetime="2026-01-01T01:00:00.000Z">Thu 1 Jan 01:00 UTC, in 1 h</time>');
    expect((await b.get(`/apps/${id}/next-runs?schedule=nope`)).html).toContain('No next runs: the schedule must be a cron expression');
    expect((await b.get(`/apps/${id}/next-runs`)).html).toContain('No next runs: the schedule is empty');
    expect((await b.get('/apps/999/next-runs?schedule=@daily')).status).toBe(404);
  });

  it('says each refusal under its field and in role="alert", keeps what was typed, changes nothing', async () => {
    await b.get(`/apps/${id}/add-job`);
    const bad = await b.post(`/apps/${id}/jobs`, { name: 'Bad Name', schedule: '* * *', command: '  ', timeout_seconds: '0', concurrency: 'forbid' });
    expect(bad.status).toBe(400);
    expect(underField(bad.html, 'name')).toMatch(/^Job name must start with a lowercase letter/);
    expect(underField(bad.html, 'schedule')).toMatch(/^Schedule must be a cron expression of five fields/);
    expect(underField(bad.html, 'timeout_seconds')).toBe('Timeout (seconds) must be between 1 and 86400');
    expect(bad.html).toMatch(/aria-invalid="true"[^>]*>\s*<\/textarea>|<textarea[^>]*aria-invalid="true"/);
    expect(bad.html).toContain('Command must not be blank');
    expect(roleText(bad.html, 'alert')).toMatch(/^Job name must start .*; Schedule must be .*; Command must not be blank; Timeout \(seconds\) must be between 1 and 86400$/);
    expect(bad.html).toContain('value="Bad Name"');
    expect(storedJobs()).toEqual([]);

    await addNightly();
    await b.get(`/apps/${id}/add-job`);
    const dup = await b.post(`/apps/${id}/jobs`, { ...nightly, schedule: '@hourly' });
    expect(dup.status).toBe(400);
    expect(underField(dup.html, 'name')).toBe('Job name: another job of this app is named nightly');
    const never = await b.post(`/apps/${id}/jobs`, { ...nightly, name: 'feb', schedule: '0 0 31 2 *' });
    expect(underField(never.html, 'schedule')).toBe('Schedule: never runs');
    expect(storedJobs()).toHaveLength(1);
  });

  it('edits a job (an argument array stays an array), removes one, and refuses an unknown job or a missing CSRF token', async () => {
    await addNightly();
    const edit = await b.get(`/apps/${id}/jobs/nightly/edit`);
    expect(edit.status).toBe(200);
    expect(edit.html).toContain('value="0 3 * * *"');
    expect(edit.html).toContain('>Save job</button>');
    const saved = await b.post(`/apps/${id}/jobs/nightly`, { ...nightly, schedule: '@daily', command: '["rake", "db:migrate"]', concurrency: 'replace' });
    expect(saved.status, roleText(saved.html, 'alert')).toBe(303);
    expect(storedJobs()).toEqual([{ name: 'nightly', schedule: '@daily', command: ['rake', 'db:migrate'], timeout_seconds: 600, concurrency: 'replace' }]);
    // Shown again as the JSON it was typed as; a shell line starting with [ stays a string.
    expect((await b.get(`/apps/${id}/jobs/nightly/edit`)).html).toContain('>[&quot;rake&quot;,&quot;db:migrate&quot;]</textarea>');
    await b.post(`/apps/${id}/jobs/nightly`, { ...nightly, command: '[ -f /x ] && echo y' });
    expect(storedJobs()[0].command).toBe('[ -f /x ] && echo y');
    // Renamed: the list holds the new name only.
    await b.post(`/apps/${id}/jobs/nightly`, { ...nightly, name: 'daily' });
    expect(storedJobs().map((j: { name: string }) => j.name)).toEqual(['daily']);

    expect((await b.get(`/apps/${id}/jobs/nope/edit`)).status).toBe(404);
    expect((await b.post(`/apps/${id}/jobs/nope`, nightly)).status).toBe(404);
    expect((await b.post(`/apps/${id}/jobs/daily/delete`, {}, { csrf: false })).status).toBe(403);
    expect(storedJobs()).toHaveLength(1);
    const removed = await b.post(`/apps/${id}/jobs/daily/delete`);
    expect(removed.location).toBe(`/apps/${id}/jobs?m=job_removed`);
    expect(storedJobs()).toEqual([]);
  });
});

describe('run now and history', () => {
  it('"Run now" needs a live deploy, then records a manual run; the job page and the run page show the history and output', async () => {
    await addNightly();
    const page = await b.get(`/apps/${id}/jobs/nightly`);
    expect(page.html).toContain('No runs yet.');
    const refused = await b.post(`/apps/${id}/jobs/nightly/run`);
    expect(refused.status).toBe(409);
    expect(roleText(refused.html, 'alert')).toMatch(/has no live deploy yet/);

    const d = createDeploy(t.db, t.enqueue, undefined, { appId: id, appName: 'jw', imageRef: 'svc-test/web:v1', trigger: 'manual' });
    observeApp(t.db, id, { liveDeployId: d.id });
    const ran = await b.post(`/apps/${id}/jobs/nightly/run`);
    expect(ran.location).toBe(`/apps/${id}/jobs/nightly?m=job_run_queued`);
    expect(listRuns(t.db, id, 'nightly')).toEqual([expect.objectContaining({ trigger: 'manual', status: 'pending', command: ['sh', '-c', 'echo hi && date'] })]);
    expect(t.enqueue.keys).toContain('jobs:jw');

    const done = insertJobRun(t.db, {
      appId: id, job: 'nightly', trigger: 'schedule', status: 'failed', command: ['sh', '-c', 'false'], timeoutSeconds: 600, scheduledFor: '2026-01-01T03:00:00.000Z',
      startedAt: '2026-01-01T03:00:01.000Z', finishedAt: '2026-01-01T03:00:04.000Z', exitCode: 2, output: 'line one\n<b>two</b>\n', createdAt: '2026-01-01T03:00:00.000Z',
    });
    const history = await b.get(`/apps/${id}/jobs/nightly`);
    expect(history.html).toMatch(/aria-label="Runs of nightly"/);
    expect(history.html).toContain(`href="/apps/${id}/runs/${done.id}"`);
    expect(history.html).toContain('<time datetime="2026-01-01T03:00:01.000Z">');
    expect(history.html).toContain('>3 s</td>');
    // An open run refreshes the list until it ends.
    expect(history.html).toContain('data-refresh="3"');
    const run = await b.get(`/apps/${id}/runs/${done.id}`);
    expect(run.status).toBe(200);
    expect(run.html).toMatch(/role="log" aria-label="Output">line one\n&lt;b&gt;two&lt;\/b&gt;\n<\/pre>/);
    expect(run.html).toContain('<dt>Exit code</dt><dd>2</dd>');
    // The app page lists the newest runs with their links too.
    expect((await b.get(`/apps/${id}/jobs`)).html).toContain(`href="/apps/${id}/runs/${done.id}"`);

    // Removed from the schedule, its history stays reachable.
    await b.post(`/apps/${id}/jobs/nightly/delete`);
    const gone = await b.get(`/apps/${id}/jobs/nightly`);
    expect(gone.status).toBe(200);
    expect(gone.html).toContain('no longer in the app');
    expect((await b.get(`/apps/${id}/jobs/never-was`)).status).toBe(404);
    expect((await b.get(`/apps/${id}/runs/99999`)).status).toBe(404);
  });
});

describe('renaming a job in the editor', () => {
  it('moves its history and its last tick to the new name, in the same write as the jobs', async () => {
    await addNightly();
    const run = insertJobRun(t.db, {
      appId: id, job: 'nightly', trigger: 'schedule', status: 'succeeded', command: ['sh', '-c', 'true'], timeoutSeconds: 600,
      startedAt: '2026-01-01T03:00:01.000Z', finishedAt: '2026-01-01T03:00:02.000Z', exitCode: 0, output: '', createdAt: '2026-01-01T03:00:00.000Z',
    });
    setTick(t.db, id, 'nightly', '2026-01-01T03:00:00.000Z');
    // A stale tick of the new name (a job of that name removed earlier) does not block the move.
    setTick(t.db, id, 'daily', '2025-12-01T03:00:00.000Z');
    await b.get(`/apps/${id}/jobs/nightly/edit`);
    const saved = await b.post(`/apps/${id}/jobs/nightly`, { ...nightly, name: 'daily' });
    expect(saved.status, roleText(saved.html, 'alert')).toBe(303);
    expect(storedJobs().map((j: { name: string }) => j.name)).toEqual(['daily']);
    expect(listRuns(t.db, id, 'daily').map((r) => r.id)).toEqual([run.id]);
    expect(listRuns(t.db, id, 'nightly')).toEqual([]);
    expect([...ticksOf(t.db, id)]).toEqual([['daily', '2026-01-01T03:00:00.000Z']]);
    expect((await b.get(`/apps/${id}/jobs/daily`)).html).toContain(`href="/apps/${id}/runs/${run.id}"`);
    expect((await b.get(`/apps/${id}/jobs/nightly`)).status).toBe(404);
  });

  it('moves nothing when the save is refused', async () => {
    await addNightly();
    await b.post(`/apps/${id}/jobs`, { ...nightly, name: 'weekly' });
    const run = insertJobRun(t.db, {
      appId: id, job: 'nightly', trigger: 'manual', status: 'succeeded', command: ['true'], timeoutSeconds: 600, exitCode: 0, output: '', createdAt: '2026-01-01T03:00:00.000Z',
    });
    // Renaming nightly to weekly collides with the other job: refused, the history stays where it was.
    const refused = await b.post(`/apps/${id}/jobs/nightly`, { ...nightly, name: 'weekly' });
    expect(refused.status).toBe(400);
    expect(roleText(refused.html, 'alert')).toMatch(/another job of this app is named weekly/);
    expect(listRuns(t.db, id, 'nightly').map((r) => r.id)).toEqual([run.id]);
    expect(storedJobs().map((j: { name: string }) => j.name)).toEqual(['nightly', 'weekly']);
  });
});

describe('actions offered by role', () => {
  const actions = (html: string) => ({
    runNow: html.includes(`action="/apps/${id}/jobs/nightly/run"`),
    edit: html.includes(`href="/apps/${id}/jobs/nightly/edit"`),
    remove: html.includes(`action="/apps/${id}/jobs/nightly/delete"`),
    add: html.includes(`href="/apps/${id}/add-job"`),
    deploy: html.includes(`action="/apps/${id}/deploy"`),
    envForm: html.includes(`action="/apps/${id}/env"`),
    settingsForm: html.includes(`action="/apps/${id}/settings"`),
    deleteApp: html.includes(`action="/apps/${id}/delete"`),
    terminal: html.includes(`href="/apps/${id}/terminal"`),
    logs: html.includes(`data-logs="${id}"`),
  });
  /** The app page's tabs where these forms and buttons live, as one text (a tab the user may not open adds its 403 page). */
  const tabs = async (client: ReturnType<typeof formClient>) =>
    (await Promise.all(['', '/jobs', '/env', '/logs', '/settings'].map(async (tab) => (await client.get(`/apps/${id}${tab}`)).html))).join('');
  const as = async (role: 'viewer' | 'developer', apps: string[] | null) => {
    const { cookie } = await t.login(`u-${role}-${apps?.join('') ?? 'all'}`, role, apps);
    const other = formClient(t.app);
    other.jar.set('session', cookie);
    return other;
  };

  it('shows each form and button only to a role its route allows; the routes refuse the others anyway', async () => {
    await addNightly();
    const all = { runNow: true, edit: true, remove: true, add: true, deploy: true, envForm: true, settingsForm: true, deleteApp: true, terminal: true, logs: true };
    expect(actions(await tabs(b))).toEqual(all);

    const dev = await as('developer', ['jw']);
    const devPage = { html: await tabs(dev) };
    expect(actions(devPage.html)).toEqual({ ...all, edit: false, remove: false, add: false, settingsForm: false, deleteApp: false, terminal: false });
    // The settings are still readable, in a disabled fieldset with nothing to submit.
    expect(devPage.html).toMatch(/<fieldset disabled=""[^>]*>/);
    const devJob = await dev.get(`/apps/${id}/jobs/nightly`);
    expect(devJob.status).toBe(200);
    expect(actions(devJob.html)).toMatchObject({ runNow: true, edit: false, remove: false });
    expect((await dev.post(`/apps/${id}/jobs/nightly/delete`)).status).toBe(403);

    // A developer limited to other apps, and a viewer: nothing to act with on this app.
    const none = { ...all, runNow: false, edit: false, remove: false, add: false, deploy: false, envForm: false, settingsForm: false, deleteApp: false, terminal: false, logs: false };
    const stranger = await as('developer', ['other']);
    expect(actions(await tabs(stranger))).toEqual(none);
    const viewer = await as('viewer', null);
    expect(actions(await tabs(viewer))).toEqual(none);
    expect((await viewer.post(`/apps/${id}/jobs/nightly/run`)).status).toBe(403);
  });
});
