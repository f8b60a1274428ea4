// Volumes, stop_first, scheduled jobs and one-off commands end to end (issue 22): the real daemon, Docker
// engine, host Caddy and DNS responder; one daemon for the file. The jobs scheduler runs on an injected
// clock, so cron times come when the test moves it, not in minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { readSse } from '../../src/cli/sse.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';
import { launchBrowser } from '../support/browser.js';

const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let appId: number;
let clock = Date.parse('2026-01-01T00:00:30Z');
const volumeFile = () => join(t.dataDir, 'volumes', 'wl-app', 'data', 'note.txt');

beforeAll(async () => {
  await ensureTestImages(runtime);
  t = await startTestDaemon('workloads', {}, { now: () => clock });
  const res = await t.api('POST', '/api/apps', {
    name: 'wl-app', internal_port: 3000, access_mode: 'port', fallback_port: await freePort(),
    volumes: [{ name: 'data', mount_path: '/data' }], deploy_strategy: 'stop_first',
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  appId = res.body.id;
  await deployReaching(t, await requestImageDeploy(t, appId, WEB_V1), (d) => d.status === 'success', 'to succeed');
}, 60_000);
afterAll(async () => {
  await t?.close();
});

/** POST /run and read the SSE stream to its `exit` event. */
async function run(command: string | string[]): Promise<{ stdout: string[]; stderr: string[]; exit: { status: string; exit_code: number | null } }> {
  const res = await fetch(`${t.url}/api/apps/${appId}/run`, { method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ command }) });
  expect(res.status).toBe(200);
  const out = { stdout: [] as string[], stderr: [] as string[], exit: undefined as any };
  for await (const e of readSse(res.body!)) {
    if (e.event === 'stdout') out.stdout.push(e.data);
    if (e.event === 'stderr') out.stderr.push(e.data);
    if (e.event === 'exit') out.exit = JSON.parse(e.data);
  }
  return out;
}
const liveContainer = async () => (await t.api('GET', `/api/apps/${appId}`)).body.live_container_name as string;
const catInLive = async () => (await runtime.exec(await liveContainer(), ['cat', '/data/note.txt'])).stdout;

describe('one-off commands', () => {
  it('streams the output and returns the exit status; a string runs through sh -c, an array as is', async () => {
    const wrote = await run('echo kept > /data/note.txt && echo done && echo oops >&2');
    expect(wrote.exit).toMatchObject({ status: 'succeeded', exit_code: 0 });
    expect(wrote.stdout).toContain('done');
    expect(wrote.stderr).toContain('oops');
    const failed = await run(['sh', '-c', 'cat /data/note.txt; exit 3']);
    expect(failed.exit).toMatchObject({ status: 'failed', exit_code: 3 });
    expect(failed.stdout).toEqual(['kept']);
    // No shell in between for an array: `$HOME` reaches echo as is.
    expect((await run(['echo', '$HOME;', 'ls'])).stdout).toEqual(['$HOME; ls']);
    const runs = (await t.api('GET', `/api/apps/${appId}/runs`)).body;
    expect(runs[0]).toMatchObject({ trigger: 'one_off', exit_code: 0, command: ['echo', '$HOME;', 'ls'] });
    expect((await t.api('GET', `/api/apps/${appId}/runs/${runs[1].id}`)).body.output).toBe('kept\n');
    // Validation: bad command, unknown app.
    expect((await t.api('POST', `/api/apps/${appId}/run`, { command: [] })).status).toBe(400);
    expect((await t.api('POST', `/api/apps/99999/run`, { command: 'true' })).status).toBe(404);
  }, 30_000);
});

/** The real CLI as a process (tsx, as test/integration/cli.test.ts runs it). */
function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const repo = resolve(import.meta.dirname, '../..');
  return new Promise((done) => {
    execFile(join(repo, 'node_modules/.bin/tsx'), [join(repo, 'src/cli.ts'), ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_URL: t.url, SVC_TOKEN: t.token }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

describe('svc run', () => {
  it('prints the output and exits with the command status', async () => {
    const r = await svc(['run', 'wl-app', '--', 'sh', '-c', 'cat /data/note.txt; echo to-stderr >&2; exit 7']);
    expect(r).toMatchObject({ code: 7, stdout: 'kept\n', stderr: 'to-stderr\n' });
    expect(await svc(['run', 'wl-app', '--', 'echo', 'ok'])).toMatchObject({ code: 0, stdout: 'ok\n' });
  }, 30_000);
});

describe('volumes', () => {
  it('a stop_first deploy runs one container at a time, reports its downtime, and keeps the volume', async () => {
    let most = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const running = (await runtime.list({ [LABELS.instance]: t.instance, [LABELS.app]: 'wl-app' })).filter((c) => c.running).length;
        most = Math.max(most, running);
      }
    })();
    const id = await requestImageDeploy(t, appId, WEB_V2);
    await deployReaching(t, id, (d) => d.status === 'success', 'to succeed');
    watching = false;
    await watch;
    expect(most).toBe(1);
    const events = (await t.api('GET', `/api/deploys/${id}/events`)).body as { message: string }[];
    expect(events.some((e) => /^stop_first: old container .* stopped before the new one starts$/.test(e.message))).toBe(true);
    expect(events.find((e) => e.message.startsWith('stop_first downtime:'))?.message).toMatch(/^stop_first downtime: \d+ ms/);
    expect(await catInLive()).toBe('kept\n');
  }, 45_000);

  it('survives a heal that recreates the container', async () => {
    const before = await liveContainer();
    await runtime.remove(before);
    await waitFor(async () => (await runtime.inspect(before))?.running, { timeoutMs: 20_000, what: 'the live container recreated' });
    expect(await catInLive()).toBe('kept\n');
  }, 30_000);

  it('survives a crash of the container (restarted by self-healing)', async () => {
    const name = await liveContainer();
    await runtime.stop(name, 0);
    await waitFor(async () => (await runtime.inspect(name))?.running, { timeoutMs: 20_000, what: 'the stopped container restarted' });
    expect(await liveContainer()).toBe(name);
    expect(await catInLive()).toBe('kept\n');
  }, 30_000);

  it('is in a backup and comes back with a restore', async () => {
    const backup = await t.api('POST', '/api/backups');
    expect(backup.status, JSON.stringify(backup.body)).toBe(201);
    writeFileSync(volumeFile(), 'changed after the backup\n');
    const restore = await t.api('POST', `/api/backups/${backup.body.id}/restore`);
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    expect(readFileSync(volumeFile(), 'utf8')).toBe('kept\n');
    // The running container was recreated over the restored directory, so it sees the restored file too.
    await waitFor(async () => (await catInLive().catch(() => '')) === 'kept\n', { timeoutMs: 20_000, what: 'the app to serve the restored volume' });
  }, 45_000);
});

describe('a change of volumes', () => {
  it('rolls the app so the running container mounts the new list, with an event saying why', async () => {
    const before = await liveContainer();
    const res = await t.api('PUT', `/api/apps/${appId}`, { volumes: [{ name: 'data', mount_path: '/data' }, { name: 'extra', mount_path: '/extra' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const roll = (await t.api('GET', `/api/apps/${appId}/deploys`)).body[0];
    expect(roll).toMatchObject({ trigger: 'roll', image_ref: WEB_V2 });
    await deployReaching(t, roll.id, (d) => d.status === 'success', 'to succeed');
    const events = (await t.api('GET', `/api/deploys/${roll.id}/events`)).body as { step: string; message: string }[];
    expect(events[0]).toMatchObject({ step: 'roll', message: expect.stringMatching(/^volume extra added at \/extra: .* deployed again \(stop_first\)$/) });
    expect(await liveContainer()).not.toBe(before);
    writeFileSync(join(t.dataDir, 'volumes', 'wl-app', 'extra', 'seen.txt'), 'mounted\n');
    expect((await runtime.exec(await liveContainer(), ['cat', '/extra/seen.txt'])).stdout).toBe('mounted\n');
    expect(await catInLive()).toBe('kept\n');
  }, 45_000);
});

describe('scheduled jobs', () => {
  const runsOf = async () => (await t.api('GET', `/api/apps/${appId}/jobs/tick/runs`)).body as any[];
  const poke = () => t.daemon.manager.enqueue(`jobs:wl-app`);

  it('runs on its schedule, follows forbid for an overlap, and runs a missed time once after a restart', async () => {
    const res = await t.api('PUT', `/api/apps/${appId}`, { jobs: [{ name: 'tick', schedule: '*/5 * * * *', command: 'echo tick at $(cat /data/note.txt); sleep 3', concurrency: 'forbid' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await t.api('PUT', `/api/apps/${appId}`, { jobs: [{ name: 'bad', schedule: '* * *', command: 'true' }] })).status).toBe(400);
    // The new job's schedule starts now (00:00:30): nothing runs until 00:05.
    await waitFor(() => t.daemon.db.$client.prepare('SELECT count(*) AS n FROM job_ticks').get() as any, { what: 'the first tick' });
    expect(await runsOf()).toEqual([]);

    clock = Date.parse('2026-01-01T00:05:02Z');
    poke();
    const first = await waitFor(async () => (await runsOf()).find((r) => r.status === 'running'), { what: 'the 00:05 run' });
    expect(first).toMatchObject({ trigger: 'schedule', scheduled_for: '2026-01-01T00:05:00.000Z' });

    clock = Date.parse('2026-01-01T00:10:02Z');
    poke();
    const skipped = await waitFor(async () => (await runsOf()).find((r) => r.status === 'skipped'), { what: 'the overlapping 00:10 run skipped' });
    expect(skipped.error).toMatch(/still running \(concurrency forbid\)/);

    const done = await waitFor(async () => (await runsOf()).find((r) => r.id === first.id && r.status !== 'running'), { timeoutMs: 15_000, what: 'the 00:05 run to end' });
    expect(done).toMatchObject({ status: 'succeeded', exit_code: 0 });
    expect((await t.api('GET', `/api/apps/${appId}/runs/${first.id}`)).body.output).toBe('tick at kept\n');

    // Down from 00:10 to 01:02: eleven times passed, one run (the newest, 01:00) at the next start.
    await t.daemon.stop();
    clock = Date.parse('2026-01-01T01:02:05Z');
    await t.restart();
    const missed = await waitFor(async () => {
      const l = (await runsOf()).filter((r) => r.trigger === 'missed');
      return l.length > 0 ? l : undefined;
    }, { timeoutMs: 15_000, what: 'the missed run' });
    expect(missed.map((r: any) => r.scheduled_for)).toEqual(['2026-01-01T01:00:00.000Z']);
    // The volume outlived the daemon's restart too.
    expect(await catInLive()).toBe('kept\n');
    const all = await runsOf();
    expect(all.filter((r) => r.status !== 'skipped')).toHaveLength(2);
  }, 50_000);

  it('"run now" answers 202 and records a manual run', async () => {
    const res = await t.api('POST', `/api/apps/${appId}/jobs/tick/runs`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ trigger: 'manual', job: 'tick' });
    expect((await t.api('POST', `/api/apps/${appId}/jobs/nope/runs`)).status).toBe(404);
    const listed = await svc(['jobs', 'wl-app']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^tick\s+\*\/5 \* \* \* \*\s+forbid\s+#\d+/m);
  }, 20_000);
});

describe('the job editor in a browser', () => {
  it('adds a job with a preview of its next runs and errors under the fields, runs it now, shows its history and output, edits and removes it', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.goto(t.url + '/login');
      await page.getByLabel('Username', { exact: true }).fill('admin');
      await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL((u) => u.pathname === '/');
      await page.goto(`${t.url}/apps/${appId}/jobs`);
      await page.getByRole('link', { name: 'Add a job' }).click();
      await page.getByLabel('Job name', { exact: true }).fill('report');
      await page.getByLabel('Schedule', { exact: true }).fill('30 2 * * *');
      await page.getByLabel('Command', { exact: true }).fill('echo report-$((6*7))');
      await page.getByLabel('Timeout (seconds)', { exact: true }).fill('0');
      // Typed: the page's script shows the next runs at once. The pages' clock is the wall clock (only the
      // scheduler's is injected here): five days at 02:30.
      await page.locator('#next-runs li').nth(4).waitFor();
      // Without a script: the same form posted with "Show next runs".
      await page.getByRole('button', { name: 'Show next runs' }).click();
      await page.waitForURL((u) => u.pathname === `/apps/${appId}/jobs`);
      await page.locator('#next-runs li').first().waitFor();
      const next = await page.locator('#next-runs li').allTextContents();
      expect(next).toHaveLength(5);
      for (const line of next) expect(line).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} [A-Z][a-z]{2}( \d{4})? 02:30 UTC, in \d/);
      await page.getByRole('button', { name: 'Add job' }).click();
      // Refused: said under the field, the input marked invalid, what was typed kept.
      await page.locator('.field-error', { hasText: 'Timeout (seconds) must be between 1 and 86400' }).waitFor();
      expect(await page.getByLabel('Timeout (seconds)', { exact: true }).getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByLabel('Command', { exact: true }).inputValue()).toBe('echo report-$((6*7))');
      await page.getByLabel('Timeout (seconds)', { exact: true }).fill('60');
      await page.getByRole('button', { name: 'Add job' }).click();
      await page.waitForURL((u) => u.pathname === `/apps/${appId}/jobs` && u.searchParams.get('m') === 'job_saved');
      const jobs = page.getByRole('table', { name: 'Scheduled jobs' });
      await jobs.getByRole('row').filter({ hasText: 'report' }).getByText(/02:30 UTC, in /).waitFor();
      // The API sees what the editor wrote.
      expect((await t.api('GET', `/api/apps/${appId}/jobs`)).body.find((j: { name: string }) => j.name === 'report')).toMatchObject({ schedule: '30 2 * * *', timeout_seconds: 60, concurrency: 'forbid' });

      await jobs.getByRole('button', { name: 'Run now report' }).click();
      await page.waitForURL((u) => u.pathname === `/apps/${appId}/jobs/report`);
      // The history refreshes itself until the run ends.
      const history = page.getByRole('table', { name: 'Runs of report' });
      await history.getByText('succeeded').waitFor({ timeout: 20_000 });
      await history.getByRole('link', { name: /output/ }).first().click();
      await page.getByRole('log', { name: 'Output' }).getByText('report-42').waitFor();

      await page.getByRole('link', { name: 'Job report' }).click();
      await page.getByRole('link', { name: 'Edit report' }).click();
      await page.getByLabel('Schedule', { exact: true }).fill('@hourly');
      await page.getByRole('button', { name: 'Save job' }).click();
      await page.waitForURL((u) => u.searchParams.get('m') === 'job_saved');
      expect((await t.api('GET', `/api/apps/${appId}/jobs`)).body.find((j: { name: string }) => j.name === 'report').schedule).toBe('@hourly');
      await jobs.getByRole('button', { name: 'Remove report' }).click();
      await page.waitForURL((u) => u.searchParams.get('m') === 'job_removed');
      expect((await t.api('GET', `/api/apps/${appId}/jobs`)).body.map((j: { name: string }) => j.name)).not.toContain('report');
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe('delete', () => {
  it('with ?purge=true removes the volumes and the run containers', async () => {
    expect((await t.api('DELETE', `/api/apps/${appId}?purge=true`)).status).toBe(204);
    expect(existsSync(join(t.dataDir, 'volumes', 'wl-app'))).toBe(false);
    await waitFor(() => !existsSync(join(t.dataDir, 'volumes', '.trash')) || readdirEmpty(join(t.dataDir, 'volumes', '.trash')), { timeoutMs: 15_000, what: 'the trash emptied' });
    await waitFor(async () => (await runtime.list({ [LABELS.instance]: t.instance, [LABELS.jobApp]: 'wl-app' })).length === 0, { timeoutMs: 15_000, what: 'run containers removed' });
  }, 30_000);
});

const readdirEmpty = (dir: string) => readdirSync(dir).length === 0;
