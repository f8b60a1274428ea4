// Private registries end to end: Debian's docker-registry on loopback with htpasswd (bcrypt) auth holds an
// image only its user may pull. A deploy of it fails with the registry's refusal until svc holds the
// credentials (POST /api/registries), then succeeds; "test" logs in through the engine and answers the
// registry's own words for a wrong password; no answer, event or log line carries the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const USER = 'ci-bot';
const PASSWORD = 'pull-only-9f3b7c2e';
const docker = new Docker();
let dir: string;
let registry: ChildProcess | undefined;
let server: string;
let image: string;
let t: TestDaemon;

/** Follows an engine progress stream to its end; rejects on an error message in it. */
const drain = (stream: NodeJS.ReadableStream) =>
  new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (err: Error | null, out: { error?: string }[]) => (err ? reject(err) : out.find((m) => m.error) ? reject(new Error(out.find((m) => m.error)!.error)) : resolve())));

beforeAll(async () => {
  await ensureTestImages();
  dir = await mkdtemp(join(tmpdir(), 'svc-private-registry-'));
  const port = await freePort();
  server = `127.0.0.1:${port}`;
  image = `${server}/private/web:v1`;
  // bcrypt at the lowest cost: the registry checks it on every request.
  const line = execFileSync('htpasswd', ['-nbB', '-C', '4', USER, PASSWORD]).toString().trim();
  await writeFile(join(dir, 'htpasswd'), line + '\n');
  await writeFile(
    join(dir, 'config.yml'),
    [
      'version: 0.1',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      'http:',
      `  addr: ${server}`,
      'auth:',
      '  htpasswd:',
      '    realm: svc-test',
      `    path: ${join(dir, 'htpasswd')}`,
      '',
    ].join('\n'),
  );
  registry = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
  await waitFor(async () => (await fetch(`http://${server}/v2/`).then((r) => r.status).catch(() => 0)) === 401 || undefined, { timeoutMs: 15_000, what: 'the registry answers' });
  // The image, pushed with the credentials, then gone from the engine: a deploy has to pull it.
  await docker.getImage(WEB_V1).tag({ repo: `${server}/private/web`, tag: 'v1' });
  await drain((await docker.getImage(image).push({ authconfig: { username: USER, password: PASSWORD, serveraddress: server } } as never)) as unknown as NodeJS.ReadableStream);
  await docker.getImage(image).remove();
  t = await startTestDaemon('private-registry');
});

afterAll(async () => {
  await t?.close();
  await docker.getImage(image).remove().catch(() => {});
  registry?.kill();
  await rm(dir, { recursive: true, force: true });
});

describe('private registry credentials', () => {
  it('a private image deploys once svc holds its credentials; test answers the registry; the password never shows', async () => {
    const app = await t.api('POST', '/api/apps', { name: 'private-web', internal_port: 3000, access_mode: 'port', fallback_port: await freePort() });
    expect(app.status, JSON.stringify(app.body)).toBe(201);

    // Anonymous: the registry refuses the pull and the deploy says so.
    const refused = await deployReaching(t, await requestImageDeploy(t, app.body.id, image), (d) => d.status === 'failed', 'failed');
    expect(refused.error).toMatch(/pull of 127\.0\.0\.1:\d+\/private\/web:v1 failed: .*(no basic auth credentials|unauthorized)/);

    // Wrong password: stored, and "test" answers the registry's refusal (502), not the password.
    const wrong = await t.api('POST', '/api/registries', { server, username: USER, password: 'not-the-password' });
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(201);
    expect(wrong.body).toEqual({ id: expect.any(Number), server, username: USER, created_at: expect.any(String), updated_at: expect.any(String) });
    const failedLogin = await t.api('POST', `/api/registries/${wrong.body.id}/test`);
    expect(failedLogin.status).toBe(502);
    expect(failedLogin.body).toMatchObject({ ok: false, code: 'registry_login_failed' });
    expect(failedLogin.body.error).toMatch(/login to 127\.0\.0\.1:\d+ failed: .*unauthorized/i);
    expect(JSON.stringify(failedLogin.body)).not.toContain('not-the-password');

    // The right one: the login succeeds and the deploy pulls the image with it.
    expect((await t.api('PUT', `/api/registries/${wrong.body.id}`, { password: PASSWORD })).status).toBe(200);
    expect((await t.api('POST', `/api/registries/${wrong.body.id}/test`)).body).toEqual({ ok: true, status: 'Login Succeeded' });
    const ok = await deployReaching(t, await requestImageDeploy(t, app.body.id, image), (d) => ['success', 'failed', 'auto_rollback'].includes(d.status), 'ended', 60_000);
    expect(ok.status, ok.error).toBe('success');
    expect((await docker.getImage(image).inspect()).RepoTags).toContain(image);

    const events = JSON.stringify((await t.api('GET', `/api/deploys/${ok.id}/events`)).body);
    expect(events).toContain(`pulling ${image}`);
    const listed = JSON.stringify((await t.api('GET', '/api/registries')).body);
    for (const text of [events, listed, JSON.stringify(refused)]) expect(text).not.toContain(PASSWORD);
  });
});
