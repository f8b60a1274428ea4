// Proves the svc-test stand-in images keep the official images' contract: env-driven first-start
// initialization, readiness probes, a real round trip with the generated credentials, and data that
// survives removing the container and starting a new one on the same data directory.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Fetch, type S3Credentials } from '../support/s3-sign.js';
import {
  ENGINES_BASE_IMAGE,
  GARAGE_TEST_IMAGE,
  MYSQL_TEST_IMAGE,
  POSTGRES_TEST_IMAGE,
  REDIS_TEST_IMAGE,
  ensureServiceImages,
} from '../support/service-images.js';

const execFileP = promisify(execFile);
const INSTANCE = `test-images-${process.pid}`;
const created = { containers: new Set<string>(), dirs: new Set<string>() };

async function docker(args: string[], timeout = 120_000): Promise<string> {
  const { stdout } = await execFileP('docker', args, { timeout, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Like docker() but resolves with the exit status instead of throwing. */
async function dockerTry(args: string[], timeout = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP('docker', args, { timeout, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const secret = () => randomBytes(12).toString('hex');

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-test-images-${prefix}-`));
  created.dirs.add(dir);
  return dir;
}

async function run(opts: { name: string; image: string; env?: Record<string, string>; mounts: string[]; args?: string[] }) {
  const argv = ['run', '-d', '--name', opts.name, '--label', 'svc.managed=true', '--label', `svc.instance=${INSTANCE}`];
  for (const [k, v] of Object.entries(opts.env ?? {})) argv.push('-e', `${k}=${v}`);
  for (const m of opts.mounts) argv.push('-v', m);
  created.containers.add(opts.name);
  await docker([...argv, opts.image, ...(opts.args ?? [])]);
  const ip = (await docker(['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', opts.name])).trim();
  expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  return ip;
}

/** Graceful stop (as svc does), then removal; the data dir stays. */
async function stopAndRemove(name: string) {
  await docker(['stop', '-t', '30', name], 60_000);
  await docker(['rm', '-v', name]);
  created.containers.delete(name);
}

const logsOf = async (name: string) => {
  const r = await dockerTry(['logs', name]);
  return r.stdout + r.stderr;
};

beforeAll(async () => {
  await ensureServiceImages();
}, 900_000);

afterAll(async () => {
  // Every container this file started (and any left by an earlier, interrupted run), then the dirs.
  const leftovers = (await dockerTry(['ps', '-aq', '--filter', `label=svc.instance=${INSTANCE}`])).stdout.split('\n').filter(Boolean);
  const all = [...created.containers, ...leftovers];
  if (all.length) await dockerTry(['rm', '-f', '-v', ...all], 60_000);
  for (const dir of created.dirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Files owned by the engines' uid 999 when not running as root: remove them from a container.
      await dockerTry(['run', '--rm', '-v', `${dir}:/d`, ENGINES_BASE_IMAGE, 'find', '/d', '-mindepth', '1', '-delete']);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}, 120_000);

describe('svc-test/postgres:16', () => {
  it('initializes from env, answers pg_isready, keeps data across container recreation', async () => {
    const data = tempDir('pg');
    const env = { POSTGRES_USER: 'svcuser', POSTGRES_PASSWORD: secret(), POSTGRES_DB: 'svcdb' };
    const start = async (name: string) => {
      const ip = await run({ name, image: POSTGRES_TEST_IMAGE, env, mounts: [`${data}:/var/lib/postgresql/data`] });
      await waitFor(`pg_isready in ${name}`, 90_000, async () => (await dockerTry(['exec', name, 'pg_isready', '-U', env.POSTGRES_USER])).code === 0);
      return ip;
    };
    // psql over TCP to the container's address, so pg_hba's password rule is what lets us in.
    const psql = (name: string, ip: string, sql: string, password = env.POSTGRES_PASSWORD) =>
      dockerTry(['exec', '-e', `PGPASSWORD=${password}`, name, 'psql', '-h', ip, '-U', env.POSTGRES_USER, '-d', env.POSTGRES_DB,
        '-v', 'ON_ERROR_STOP=1', '-At', '-c', sql]);

    const first = `svc-test-images-pg-${secret()}`;
    let ip = await start(first);
    const w = await psql(first, ip, "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'kept');");
    expect(w.code, w.stderr).toBe(0);
    expect((await psql(first, ip, 'SELECT body FROM notes WHERE id = 1')).stdout.trim()).toBe('kept');
    const denied = await psql(first, ip, 'SELECT 1', 'wrong-password');
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/password authentication failed/);
    const dump = await dockerTry(['exec', first, 'pg_dumpall', '-U', env.POSTGRES_USER]);
    expect(dump.code, dump.stderr).toBe(0);
    expect(dump.stdout).toContain('CREATE TABLE public.notes');
    await stopAndRemove(first);

    const second = `svc-test-images-pg-${secret()}`;
    ip = await start(second);
    expect(await logsOf(second)).toMatch(/skipping initialization/);
    expect((await psql(second, ip, 'SELECT body FROM notes WHERE id = 1')).stdout.trim()).toBe('kept');
    expect((await dockerTry(['exec', second, 'ps', '-o', 'user=', '-p', '1'])).stdout.trim()).toBe('postgres');
  });
});

describe('svc-test/mysql:8', () => {
  it('initializes from env, answers mysqladmin ping, keeps data across container recreation', async () => {
    const data = tempDir('mysql');
    const env = { MYSQL_ROOT_PASSWORD: secret(), MYSQL_DATABASE: 'svcdb', MYSQL_USER: 'svcuser', MYSQL_PASSWORD: secret() };
    const start = async (name: string) => {
      const ip = await run({ name, image: MYSQL_TEST_IMAGE, env, mounts: [`${data}:/var/lib/mysql`] });
      await waitFor(`mysqladmin ping in ${name}`, 120_000, async () => {
        const r = await dockerTry(['exec', name, 'mysqladmin', 'ping', '-uroot', `-p${env.MYSQL_ROOT_PASSWORD}`]);
        return r.code === 0 && r.stdout.includes('alive');
      });
      return ip;
    };
    const mysql = (name: string, ip: string, sql: string) =>
      dockerTry(['exec', name, 'mysql', '-h', ip, '-u', env.MYSQL_USER, `-p${env.MYSQL_PASSWORD}`, '-N', '-B', env.MYSQL_DATABASE, '-e', sql]);

    const first = `svc-test-images-mysql-${secret()}`;
    let ip = await start(first);
    const w = await mysql(first, ip, "CREATE TABLE notes (id INT PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'kept');");
    expect(w.code, w.stderr).toBe(0);
    expect((await mysql(first, ip, 'SELECT body FROM notes WHERE id = 1')).stdout.trim()).toBe('kept');
    const rootTcp = await dockerTry(['exec', first, 'mysql', '-h', ip, '-uroot', `-p${env.MYSQL_ROOT_PASSWORD}`, '-N', '-B', '-e', 'SELECT 1']);
    expect(rootTcp.code, rootTcp.stderr).toBe(0);
    const dump = await dockerTry(['exec', first, 'mysqldump', '-uroot', `-p${env.MYSQL_ROOT_PASSWORD}`, '--all-databases', '--single-transaction']);
    expect(dump.code, dump.stderr).toBe(0);
    expect(dump.stdout).toContain('CREATE TABLE `notes`');
    await stopAndRemove(first);

    const second = `svc-test-images-mysql-${secret()}`;
    ip = await start(second);
    expect(await logsOf(second)).toMatch(/skipping initialization/);
    expect((await mysql(second, ip, 'SELECT body FROM notes WHERE id = 1')).stdout.trim()).toBe('kept');
  });
});

describe('svc-test/redis:7', () => {
  it('runs the given redis-server command, answers redis-cli ping, keeps data across container recreation', async () => {
    const data = tempDir('redis');
    const password = secret();
    const start = async (name: string) => {
      const ip = await run({
        name,
        image: REDIS_TEST_IMAGE,
        mounts: [`${data}:/data`],
        args: ['redis-server', '--requirepass', password, '--appendonly', 'yes', '--dir', '/data'],
      });
      await waitFor(`redis-cli ping in ${name}`, 60_000, async () =>
        (await dockerTry(['exec', name, 'redis-cli', '-a', password, '--no-auth-warning', 'ping'])).stdout.trim() === 'PONG');
      return ip;
    };
    const cli = (name: string, ip: string, ...args: string[]) =>
      dockerTry(['exec', name, 'redis-cli', '-h', ip, '-a', password, '--no-auth-warning', ...args]);

    const first = `svc-test-images-redis-${secret()}`;
    let ip = await start(first);
    expect((await cli(first, ip, 'SET', 'svc:key', 'kept')).stdout.trim()).toBe('OK');
    expect((await cli(first, ip, 'GET', 'svc:key')).stdout.trim()).toBe('kept');
    const noAuth = await dockerTry(['exec', first, 'redis-cli', '-h', ip, 'GET', 'svc:key']);
    expect(noAuth.stdout + noAuth.stderr).toMatch(/NOAUTH/);
    await stopAndRemove(first);

    const second = `svc-test-images-redis-${secret()}`;
    ip = await start(second);
    expect((await cli(second, ip, 'GET', 'svc:key')).stdout.trim()).toBe('kept');
  });
});

describe('svc-test/garage:1 (Garage stand-in)', () => {
  it('serves /health, the admin API v1 and SigV4-checked S3, keeping state across container recreation', async () => {
    const data = tempDir('garage');
    const confDir = tempDir('garage-conf');
    const adminToken = secret();
    const region = 'garage';
    writeFileSync(
      join(confDir, 'garage.toml'),
      [
        'metadata_dir = "/data/meta"',
        'data_dir = "/data/data"',
        'db_engine = "lmdb"',
        'replication_factor = 1',
        'rpc_bind_addr = "[::]:3901"',
        'rpc_public_addr = "127.0.0.1:3901"',
        `rpc_secret = "${randomBytes(32).toString('hex')}"`,
        '',
        '[s3_api]',
        `s3_region = "${region}"`,
        'api_bind_addr = "[::]:3900"',
        'root_domain = ".s3.garage.localhost"',
        '',
        '[admin]',
        'api_bind_addr = "[::]:3903"',
        `admin_token = "${adminToken}"`,
        '',
      ].join('\n'),
    );
    const start = async (name: string) => {
      const ip = await run({
        name,
        image: GARAGE_TEST_IMAGE,
        mounts: [`${data}:/data`, `${join(confDir, 'garage.toml')}:/etc/garage.toml:ro`],
      });
      await waitFor(`GET /health on ${name}:3900`, 60_000, async () => (await fetch(`http://${ip}:3900/health`)).status === 200);
      return ip;
    };
    const admin = async (ip: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://${ip}:3903${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as Record<string, any>) : null };
    };

    const first = `svc-test-images-garage-${secret()}`;
    let ip = await start(first);
    expect((await fetch(`http://${ip}:3903/v1/status`)).status).toBe(403); // no bearer token

    const status = await admin(ip, 'GET', '/v1/status');
    expect(status.status).toBe(200);
    const nodeId = status.json!.node as string;
    expect(nodeId).toMatch(/^[0-9a-f]{64}$/);

    const layout = await admin(ip, 'GET', '/v1/layout');
    expect(layout.json).toMatchObject({ version: 0, roles: [], stagedRoleChanges: [] });
    const staged = await admin(ip, 'POST', '/v1/layout', [{ id: nodeId, zone: 'dc1', capacity: 1_000_000_000, tags: ['svc'] }]);
    expect(staged.status).toBe(200);
    expect(staged.json!.stagedRoleChanges).toEqual([{ id: nodeId, zone: 'dc1', capacity: 1_000_000_000, tags: ['svc'] }]);
    expect((await admin(ip, 'POST', '/v1/layout/apply', { version: 5 })).status).toBe(400); // must be current + 1
    const applied = await admin(ip, 'POST', '/v1/layout/apply', { version: layout.json!.version + 1 });
    expect(applied.status).toBe(200);
    expect(applied.json!.layout).toMatchObject({ version: 1, roles: [{ id: nodeId, zone: 'dc1' }], stagedRoleChanges: [] });
    expect((await fetch(`http://${ip}:3903/health`)).status).toBe(200);

    const bucket = await admin(ip, 'POST', '/v1/bucket', { globalAlias: 'svc-bucket' });
    expect(bucket.status).toBe(200);
    const bucketId = bucket.json!.id as string;
    expect((await admin(ip, 'POST', '/v1/bucket', { globalAlias: 'svc-bucket' })).status).toBe(409);
    const key = await admin(ip, 'POST', '/v1/key', { name: 'svc-key' });
    expect(key.status).toBe(200);
    expect(key.json).toMatchObject({ name: 'svc-key', accessKeyId: expect.stringMatching(/^GK[0-9a-f]{24}$/) });
    const creds: S3Credentials = { accessKeyId: key.json!.accessKeyId, secretAccessKey: key.json!.secretAccessKey, region };
    const objectUrl = (host: string) => `http://${host}:3900/svc-bucket/dir/hello world.txt`;

    // Before the grant the key is known but not allowed.
    const early = await s3Fetch(creds, { method: 'PUT', url: objectUrl(ip), body: 'nope' });
    expect(early.status).toBe(403);

    const allow = await admin(ip, 'POST', '/v1/bucket/allow', {
      bucketId,
      accessKeyId: creds.accessKeyId,
      permissions: { read: true, write: true, owner: false },
    });
    expect(allow.status).toBe(200);
    const info = await admin(ip, 'GET', '/v1/bucket?globalAlias=svc-bucket');
    expect(info.json).toMatchObject({ id: bucketId, globalAliases: ['svc-bucket'] });
    expect(info.json!.keys).toEqual([
      expect.objectContaining({ accessKeyId: creds.accessKeyId, permissions: { read: true, write: true, owner: false } }),
    ]);

    expect((await s3Fetch(creds, { method: 'HEAD', url: `http://${ip}:3900/svc-bucket` })).status).toBe(200);
    const body = `stored through SigV4 ${secret()}`;
    const put = await s3Fetch(creds, { method: 'PUT', url: objectUrl(ip), body, headers: { 'content-type': 'text/plain' } });
    expect(put.status, await put.clone().text()).toBe(200);
    const got = await s3Fetch(creds, { method: 'GET', url: objectUrl(ip) });
    expect(got.status).toBe(200);
    expect(await got.text()).toBe(body);
    const list = await s3Fetch(creds, { method: 'GET', url: `http://${ip}:3900/svc-bucket?list-type=2&prefix=dir%2F` });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('<Key>dir/hello world.txt</Key>');

    // Wrong secret, unknown key: refused.
    expect((await s3Fetch({ ...creds, secretAccessKey: 'f'.repeat(64) }, { method: 'GET', url: objectUrl(ip) })).status).toBe(403);
    expect((await s3Fetch({ ...creds, accessKeyId: `GK${'0'.repeat(24)}` }, { method: 'GET', url: objectUrl(ip) })).status).toBe(403);
    await stopAndRemove(first);

    const second = `svc-test-images-garage-${secret()}`;
    ip = await start(second);
    expect((await admin(ip, 'GET', '/v1/status')).json!.node).toBe(nodeId);
    expect((await admin(ip, 'GET', '/v1/layout')).json).toMatchObject({ version: 1, roles: [{ id: nodeId }] });
    const again = await s3Fetch(creds, { method: 'GET', url: objectUrl(ip) });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
  });
});
