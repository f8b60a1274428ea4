// The `svc` CLI as a process against a running daemon: apply/diff a directory, apps, deploy --follow
// (exit status from the deploy's end), logs, backups, the offline restore's refusal, and errors that are
// one sentence with a non-zero status, never a stack trace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_CRASH, WEB_V1, WEB_V2 } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

const repo = resolve(import.meta.dirname, '../..');
let t: TestDaemon;
let work: string;
let port: number;

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  work = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  port = await freePort();
  t = await startTestDaemon('cli', serviceImageEnv());
});
afterAll(async () => {
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function svc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      join(repo, 'node_modules/.bin/tsx'),
      [join(repo, 'src/cli.ts'), ...args],
      { cwd: work, env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_URL: t.url, SVC_TOKEN: t.token, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const manifests = () => join(work, 'manifests');
const writeStack = (mode: string) => {
  mkdirSync(manifests(), { recursive: true });
  writeFileSync(join(manifests(), 'cache.yaml'), 'apiVersion: svc/v1\nkind: Service\nmetadata: {name: cli-cache}\nspec: {type: redis}\n');
  writeFileSync(
    join(manifests(), 'web.yaml'),
    `apiVersion: svc/v1\nkind: App\nmetadata: {name: cli-web}\nspec:\n  image_ref: ${WEB_V1}\n  fallback_port: ${port}\n  env: [{key: MODE, value: ${mode}}]\n  services: [{name: cli-cache}]\n`,
  );
};
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at /);

describe('svc CLI', () => {
  it('--help and COMMAND --help print usage', async () => {
    const main = await svc(['--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toMatch(/apply .*\n.*diff/s);
    const deploy = await svc(['deploy', '--help']);
    expect(deploy).toMatchObject({ code: 0, stdout: expect.stringContaining('svc deploy APP [--image REF] [--follow]') });
  });

  it('apply -f DIR creates what the manifests declare; diff exits 0, 1 or 2', async () => {
    writeStack('prod');
    const dry = await svc(['apply', '-f', manifests(), '--dry-run']);
    expect(dry.stdout).toContain('(dry run: nothing changed)');
    expect((await t.api('GET', '/api/apps')).body).toEqual([]);
    const applied = await svc(['apply', '-f', manifests()]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('+ Service/cli-cache create');
    expect(applied.stdout).toContain('+ App/cli-web create');
    // svc apply waited for the deploy it started and said how it ended.
    expect(applied.stdout).toMatch(/App\/cli-web: deploy \d+ of svc-test\/web:v1 succeeded/);
    await waitFor(async () => {
      const app = (await t.api('GET', '/api/apps')).body[0];
      if (app?.status === 'active') return true;
      const deploys = (await t.api('GET', `/api/apps/${app.id}/deploys`)).body as any[];
      const events = deploys[0] ? ((await t.api('GET', `/api/deploys/${deploys[0].id}/events`)).body as any[]) : [];
      throw new Error(`status ${app.status}, deploys ${JSON.stringify(deploys.map((d) => [d.status, d.error]))}, last event ${JSON.stringify(events.at(-1))}`);
    }, { timeoutMs: 120_000, what: 'cli-web active' });

    expect(await svc(['diff', '-f', manifests()])).toMatchObject({ code: 0, stdout: expect.stringContaining('= 2 unchanged') });
    writeStack('debug');
    expect(await svc(['diff', '-f', manifests()])).toMatchObject({ code: 1, stdout: expect.stringContaining('~ App/cli-web update: env.MODE') });
    writeFileSync(join(manifests(), 'bad.yaml'), 'apiVersion: svc/v1\nkind: App\nmetadata: {name: Bad}\n');
    const bad = await svc(['diff', '-f', manifests()]);
    expect(bad).toMatchObject({ code: 2, stdout: expect.stringContaining('error: bad.yaml document 0 metadata.name') });
    rmSync(join(manifests(), 'bad.yaml'));
    writeStack('prod');
  });

  it('apps lists the apps', async () => {
    const r = await svc(['apps']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+STATUS\s+REPLICAS\s+IMAGE\s+URL\s+DETAIL\ncli-web\s+active\s+1\s+svc-test\/web:v1\s+\S+\s+serving v1\n/);
  });

  it('deploy --follow prints the events and exits 0 on success, non-zero when the deploy fails', async () => {
    const ok = await svc(['deploy', 'cli-web', '--image', WEB_V2, '--follow']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/health_check.*\n(.*\n)*.*finalize.*\n.*: success/);
    const failed = await svc(['deploy', 'cli-web', '--image', WEB_CRASH, '--follow']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/: (failed|auto_rollback)\n$/);
    expect((await t.api('GET', '/api/apps')).body[0].image_ref).toBe(WEB_V2);
  });

  it('logs --tail N prints the live container log and ends', async () => {
    const r = await svc(['logs', 'cli-web', '--tail', '20']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain('svc-test web v2');
  });

  it('backup create, list and download; restore FILE refuses while a daemon answers, restore ID goes through it', async () => {
    const created = await svc(['backup', 'create']);
    expect(created.code, created.stderr).toBe(0);
    const filename = /completed: (svc-backup-\d{8}-\d{6}\.tar\.gz)/.exec(created.stdout)?.[1];
    expect(filename).toBeDefined();
    expect((await svc(['backup', 'list'])).stdout).toContain(filename);
    const id = (await t.api('GET', '/api/backups')).body[0].id;
    expect((await svc(['backup', 'download', String(id)])).code).toBe(0);
    expect(statSync(join(work, filename!)).size).toBeGreaterThan(0);
    expect((await svc(['backup', 'download', String(id), '-o', 'copy.tgz'])).code).toBe(0);
    expect(statSync(join(work, 'copy.tgz')).mode & 0o777).toBe(0o600);
    const restore = await svc(['restore', filename!]);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toContain('a svc daemon answers at');
    expect(existsSync(join(work, '.env'))).toBe(false);
    // `svc restore ID` goes through the daemon and prints the phases of the operation.
    const online = await svc(['restore', String(id)]);
    expect(online.code, online.stderr).toBe(0);
    expect(online.stdout).toMatch(new RegExp(`^restore \\d+ of backup ${id}: pending\n`));
    expect(online.stdout).toMatch(/restore \d+ completed; safety backup \d+\n$/);
  });

  it('errors are the API sentence with a non-zero status, never a stack trace', async () => {
    const missing = await svc(['deploy', 'nope']);
    expect(missing).toMatchObject({ code: 1, stderr: 'svc: no app named nope\n' });
    const token = await svc(['apps'], { SVC_TOKEN: 'wrong' });
    expect(token).toMatchObject({ code: 1, stderr: 'svc: invalid, expired or revoked API token\n' });
    const down = await svc(['apps'], { SVC_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^svc: cannot reach svc at http:\/\/127\.0\.0\.1:1: /);
    const usage = await svc(['apply', '--bogus']);
    expect(usage.code).toBe(2);
    for (const r of [missing, token, down, usage]) noStack(r.stderr);
  });

  it('apply tells when an app it applied then fails (exit 1); --no-wait does not wait', async () => {
    const crashPort = await freePort();
    const file = join(work, 'crash.yaml');
    writeFileSync(file, `apiVersion: svc/v1\nkind: App\nmetadata: {name: cli-crash}\nspec: {image_ref: "${WEB_CRASH}", fallback_port: ${crashPort}}\n`);
    const r = await svc(['apply', '-f', file]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/App\/cli-crash: deploy \d+ of \S+ (failed|failed its health check \(auto_rollback\)): /);
    writeFileSync(file, `apiVersion: svc/v1\nkind: App\nmetadata: {name: cli-crash}\nspec: {image_ref: "${WEB_V1}", fallback_port: ${crashPort}}\n`);
    const quick = await svc(['apply', '-f', file, '--no-wait']);
    expect(quick.code, quick.stderr).toBe(0);
    expect(quick.stdout).not.toContain('waiting for');
    rmSync(file);
  });

  it('apply --prune deletes what an earlier apply created and the directory no longer declares', async () => {
    rmSync(join(manifests(), 'web.yaml'));
    const r = await svc(['apply', '-f', manifests(), '--prune']);
    expect(r.stdout).toContain('- App/cli-web delete');
    expect((await t.api('GET', '/api/apps')).body).toEqual([]);
  });
});
