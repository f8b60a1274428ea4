// The `svc` CLI as a process against a running daemon: apply/diff a directory, apps, deploy --follow
// (exit status from the deploy's end), logs, backups, the offline restore's refusal, and errors that are
// one sentence with a non-zero status, never a stack trace; svc login (a password user and a TOTP user),
// whoami, --json, logout revoking the token, env precedence, completion scripts, the `svc` wrapper on the PATH.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import * as OTPAuth from 'otpauth';
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
  home = mkdtempSync(join(tmpdir(), 'svc-cli-home-'));
  port = await freePort();
  t = await startTestDaemon('cli', serviceImageEnv());
});
afterAll(async () => {
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  if (home) rmSync(home, { recursive: true, force: true });
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

/** The CLI as a person runs it: no SVC_URL/SVC_TOKEN unless given, HOME a temp dir, answers on stdin. */
function svcTyped(args: string[], o: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(join(repo, 'node_modules/.bin/tsx'), [join(repo, 'src/cli.ts'), ...args], {
      cwd: o.cwd ?? home,
      env: { PATH: process.env.PATH, HOME: home, ...o.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(o.stdin ?? '');
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}
let home: string;
const loginFile = () => join(home, '.config', 'svc', 'config');
const bearer = (token: string) => fetch(`${t.url}/api/apps`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

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

  it('svc login asks for user and password, creates a token named after the host and keeps it in ~/.config/svc/config (600)', async () => {
    const r = await svcTyped(['login', t.url], { stdin: 'admin\ncorrect horse battery\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`logged in to ${t.url} as admin (owner); token svc-cli@${hostname()} kept in ${loginFile()}`);
    expect(statSync(loginFile()).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, '.config', 'svc')).mode & 0o777).toBe(0o700);
    const file = JSON.parse(readFileSync(loginFile(), 'utf8'));
    expect(file).toEqual({ url: t.url, token: expect.stringMatching(/^svc_/), token_id: expect.any(Number), user: 'admin' });
    const tokens = (await t.api('GET', '/api/tokens')).body as { id: number; name: string; scopes: string[] }[];
    expect(tokens.find((x) => x.id === file.token_id)).toMatchObject({ name: `svc-cli@${hostname()}`, scopes: ['admin'] });
    expect(await bearer(file.token)).toBe(200);
    // A second login from this host replaces that token: the old one is revoked, the name stays unique.
    const again = await svcTyped(['login'], { stdin: 'admin\ncorrect horse battery\n' });
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(readFileSync(loginFile(), 'utf8'));
    expect(await bearer(file.token)).toBe(401);
    expect(await bearer(second.token)).toBe(200);
    expect(((await t.api('GET', '/api/tokens')).body as { name: string }[]).filter((x) => x.name === `svc-cli@${hostname()}`)).toHaveLength(1);
    const wrong = await svcTyped(['login', t.url], { stdin: 'admin\nnot the password\n' });
    expect(wrong).toMatchObject({ code: 1, stderr: 'svc: wrong username or password\n' });
    expect(JSON.parse(readFileSync(loginFile(), 'utf8')).token).toBe(second.token);
  });

  it('whoami, and the listings with --json, use the login; SVC_TOKEN and SVC_URL of the environment or .env still win', async () => {
    const me = await svcTyped(['whoami']);
    expect(me).toMatchObject({ code: 0, stdout: `admin\nrole: owner\nurl: ${t.url} (from svc login)\ntoken: from svc login\n` });
    const apps = await svcTyped(['apps', '--json']);
    expect(apps.code, apps.stderr).toBe(0);
    const listed = JSON.parse(apps.stdout) as { id: number; name: string }[];
    expect(listed.map((a) => [a.id, a.name])).toEqual(((await t.api('GET', '/api/apps')).body as { id: number; name: string }[]).map((a) => [a.id, a.name]));
    expect(listed.map((a) => a.name)).toEqual(['cli-web']);
    const listings = [['services'], ['deploys', 'cli-web'], ['tokens'], ['backup', 'list'], ['volumes', 'cli-web'], ['jobs', 'cli-web'], ['registry', 'list'], ['target', 'list'], ['notify', 'list']];
    const answers = await Promise.all(listings.map((cmd) => svcTyped([...cmd, '--json'])));
    listings.forEach((cmd, i) => {
      expect(answers[i].code, `${cmd.join(' ')}: ${answers[i].stderr}`).toBe(0);
      expect(() => JSON.parse(answers[i].stdout), cmd.join(' ')).not.toThrow();
    });
    expect(JSON.parse(answers[1].stdout).map((d: { id: number }) => d.id)).toEqual(((await t.api('GET', `/api/apps/${listed[0].id}/deploys`)).body as { id: number }[]).map((d) => d.id));
    expect((await svcTyped(['apps', '--names'])).stdout).toBe('cli-web\n');
    // The environment wins over the login file, .env too; another daemon's URL never gets the login's token.
    expect(await svcTyped(['apps'], { env: { SVC_TOKEN: 'wrong' } })).toMatchObject({ code: 1, stderr: 'svc: invalid, expired or revoked API token\n' });
    expect((await svcTyped(['whoami'], { env: { SVC_TOKEN: t.token } })).stdout).toContain('token: from the environment');
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-dotenv-'));
    try {
      writeFileSync(join(dir, '.env'), 'SVC_TOKEN=wrong-too\n');
      expect(await svcTyped(['apps'], { cwd: dir })).toMatchObject({ code: 1, stderr: 'svc: invalid, expired or revoked API token\n' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const elsewhere = await svcTyped(['whoami'], { env: { SVC_URL: 'http://127.0.0.1:1' } });
    expect(elsewhere).toMatchObject({ code: 1, stderr: 'svc: not logged in to http://127.0.0.1:1: run svc login http://127.0.0.1:1, or set SVC_TOKEN\n' });
  });

  it('svc logout revokes the token on the daemon (a later call with it is 401) and deletes the file', async () => {
    const { token } = JSON.parse(readFileSync(loginFile(), 'utf8'));
    const r = await svcTyped(['logout']);
    expect(r).toMatchObject({ code: 0, stdout: `logged out of ${t.url}: token revoked, ${loginFile()} removed\n` });
    expect(existsSync(loginFile())).toBe(false);
    expect(await bearer(token)).toBe(401);
    expect(((await t.api('GET', '/api/tokens')).body as { name: string }[]).some((x) => x.name.startsWith('svc-cli@'))).toBe(false);
    expect(await svcTyped(['logout'])).toMatchObject({ code: 0, stdout: 'not logged in (no login file)\n' });
    expect((await svcTyped(['apps'], { env: { SVC_URL: t.url } })).stderr).toContain('(run svc login, or set SVC_TOKEN');
  });

  it('svc login asks a user with a second factor for its code', async () => {
    const invite = await t.api('POST', '/api/invitations', { role: 'developer' });
    expect(invite.status).toBe(201);
    const accepted = await fetch(`${t.url}/api/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: invite.body.token, username: 'dev@example.com', password: 'another fine password' }),
    });
    expect(accepted.status).toBe(201);
    const cookie = accepted.headers.get('set-cookie')!.split(';')[0];
    const post = (path: string, body: unknown) => fetch(t.url + path, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) });
    const { secret } = (await (await post('/api/account/totp', {})).json()) as { secret: string };
    const totp = new OTPAuth.TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secret) });
    expect((await post('/api/account/totp/confirm', { code: totp.generate() })).status).toBe(200);

    const missing = await svcTyped(['login', t.url], { stdin: 'dev@example.com\nanother fine password\n' });
    expect(missing).toMatchObject({ code: 1, stderr: 'svc: no answer to "Authentication code (or a recovery code):" (stdin ended)\n' });
    expect(existsSync(loginFile())).toBe(false);
    const r = await svcTyped(['login', t.url], { stdin: `dev@example.com\nanother fine password\n${totp.generate()}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`logged in to ${t.url} as dev@example.com (developer)`);
    expect(statSync(loginFile()).mode & 0o777).toBe(0o600);
    expect((await svcTyped(['whoami', '--json'])).stdout).toMatch(/"username": "dev@example.com",\n\s+"role": "developer"/);
    expect((await svcTyped(['logout'])).code).toBe(0);
  });

  it('svc completion prints bash, zsh and fish scripts; bash completes commands and app names from the daemon', async () => {
    const login = await svcTyped(['login', t.url], { stdin: 'admin\ncorrect horse battery\n' });
    expect(login.code, login.stderr).toBe(0);
    const bin = mkdtempSync(join(tmpdir(), 'svc-cli-bin-'));
    try {
      const scripts: Record<string, string> = {};
      const printed = await Promise.all(['bash', 'zsh', 'fish'].map((shell) => svcTyped(['completion', shell])));
      ['bash', 'zsh', 'fish'].forEach((shell, i) => {
        expect(printed[i].code, printed[i].stderr).toBe(0);
        scripts[shell] = join(bin, `svc.${shell}`);
        writeFileSync(scripts[shell], printed[i].stdout);
      });
      execFileSync('bash', ['-n', scripts.bash]);
      for (const shell of ['zsh', 'fish']) {
        // Checked by the shell itself where it is installed.
        const installed = spawn('sh', ['-c', `command -v ${shell}`]);
        if ((await new Promise((d) => installed.on('close', d))) === 0) execFileSync(shell, ['-n', scripts[shell]]);
      }
      // `svc` on the PATH as the wrapper would put it, so the script's `svc apps --names` asks the daemon.
      writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec '${join(repo, 'node_modules/.bin/tsx')}' '${join(repo, 'src/cli.ts')}' "$@"\n`);
      chmodSync(join(bin, 'svc'), 0o755);
      // Asynchronous: the daemon answering `svc apps --names` runs in this process.
      const complete = (words: string[]) =>
        new Promise<string[]>((done, fail) =>
          execFile(
            'bash',
            ['-c', `source '${scripts.bash}'; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`],
            { encoding: 'utf8', env: { PATH: `${bin}:${process.env.PATH}`, HOME: home }, timeout: 60_000 },
            (err, stdout) => (err ? fail(err) : done(stdout.split('\n').filter(Boolean))),
          ),
        );
      expect(await complete(['svc', 'who'])).toEqual(['whoami']);
      expect(await complete(['svc', 'logs', 'cli-'])).toEqual(['cli-web']);
      expect(await complete(['svc', 'deploy', '--f'])).toEqual(['--follow']);
      expect((await svcTyped(['completion', 'tcsh'])).code).toBe(2);
    } finally {
      rmSync(bin, { recursive: true, force: true });
      await svcTyped(['logout']);
    }
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

describe('the svc command on the PATH (scripts/cli-wrapper.sh)', () => {
  // Two stand-in checkouts with the real script and a dist/cli.js that prints its arguments, and a bin directory (SVC_BIN_DIR).
  let root: string;
  const checkout = (name: string) => join(root, name);
  const wrapper = (name: string, action: string) =>
    new Promise<{ code: number; out: string }>((done) =>
      execFile('bash', [join(checkout(name), 'scripts/cli-wrapper.sh'), action], { env: { PATH: process.env.PATH, SVC_BIN_DIR: join(root, 'bin') } }, (err, stdout, stderr) =>
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      ),
    );
  const target = () => join(root, 'bin', 'svc');
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "svc-cli-path-"));
    for (const name of ['one', "it's two"]) {
      mkdirSync(join(checkout(name), 'scripts'), { recursive: true });
      mkdirSync(join(checkout(name), 'dist'));
      copyFileSync(join(repo, 'scripts/cli-wrapper.sh'), join(checkout(name), 'scripts/cli-wrapper.sh'));
      writeFileSync(join(checkout(name), 'dist/cli.js'), `console.log(JSON.stringify([${JSON.stringify(name)}, ...process.argv.slice(2)]));\n`);
    }
    mkdirSync(join(root, 'bin'));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("writes the wrapper, which runs this checkout's CLI with the arguments as given", async () => {
    expect(await wrapper('one', 'install')).toMatchObject({ code: 0, out: `svc: wrote ${target()} (runs ${checkout('one')}/dist/cli.js)\n` });
    expect(statSync(target()).mode & 0o777).toBe(0o755);
    expect(readFileSync(target(), 'utf8')).toContain('# svc-cli-wrapper:');
    expect(JSON.parse(execFileSync(target(), ['apps', 'two words', '--json'], { encoding: 'utf8' }))).toEqual(['one', 'apps', 'two words', '--json']);
    // Unchanged: not written again.
    expect(await wrapper('one', 'install')).toEqual({ code: 0, out: '' });
  });

  it('is rewritten by another checkout that starts, and removed only by the checkout it runs', async () => {
    expect((await wrapper("it's two", 'install')).code).toBe(0);
    expect(JSON.parse(execFileSync(target(), ['x'], { encoding: 'utf8' }))).toEqual(["it's two", 'x']);
    expect(await wrapper('one', 'remove')).toEqual({ code: 0, out: '' });
    expect(existsSync(target())).toBe(true);
    expect(await wrapper("it's two", 'remove')).toEqual({ code: 0, out: `removed ${target()}\n` });
    expect(existsSync(target())).toBe(false);
  });

  it('never overwrites nor removes a file that is not its wrapper', async () => {
    writeFileSync(target(), '#!/bin/sh\necho another svc\n');
    const r = await wrapper('one', 'install');
    expect(r.code).toBe(1);
    expect(r.out).toContain(`${target()} exists and is not svc's wrapper; left as it is`);
    expect(await wrapper('one', 'remove')).toEqual({ code: 0, out: '' });
    expect(readFileSync(target(), 'utf8')).toBe('#!/bin/sh\necho another svc\n');
    rmSync(target());
  });
});
