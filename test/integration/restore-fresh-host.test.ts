// Disaster recovery as a user lives it: a host with an app (a secret env var, a linked Postgres holding a
// row) is backed up and then lost entirely (daemon, containers, helpers, data directory). On a "fresh host"
// (a new empty directory) `svc restore FILE` runs with no daemon, then `svc serve` starts from the .env the
// restore wrote: the app serves again with its secret and link, the row is back, the old API token works.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { silentLogger } from '../../src/log.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { freePort, startCaddy, type TestCaddy } from '../support/caddy.js';
import { startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { removeInstance } from '../support/daemon.js';
import { ensureTestImages, WEB_ENV, WEB_PORT } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const runtime = createDockerRuntime({ log: silentLogger });

let a: DaemonProcess | undefined;
let host2: string;
let caddy2: TestCaddy | undefined;
let b: ChildProcess | undefined;
let bOut = '';
let bEnv: Record<string, string> = {};

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  host2 = await mkdtemp(join(tmpdir(), 'svc-test-fresh-host-'));
});

afterAll(async () => {
  await a?.close();
  if (b && b.exitCode === null) {
    const gone = new Promise((r) => b!.once('exit', r));
    b.kill('SIGTERM');
    await gone;
  }
  if (bEnv.SVC_INSTANCE) await removeInstance(bEnv.SVC_INSTANCE, bEnv.SVC_NETWORK).catch(() => {});
  if (bEnv.SVC_DATA_DIR) await stopHelpersOf(bEnv.SVC_DATA_DIR).catch(() => {});
  await caddy2?.stop().catch(() => {});
  if (host2) await rm(host2, { recursive: true, force: true });
});

/** The CLI as a user runs it, in `cwd`, with only the given environment. */
function svc(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(join(ROOT, 'node_modules/.bin/tsx'), [join(ROOT, 'src/cli.ts'), ...args], { cwd, env: { PATH: process.env.PATH, HOME: cwd, ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs SQL in a Postgres service's container with the credentials the API reveals. */
async function psql(api: (m: string, p: string) => Promise<{ body: any }>, serviceId: number, statement: string): Promise<string> {
  const s = (await api('GET', `/api/services/${serviceId}`)).body;
  const c = (await api('GET', `/api/services/${serviceId}/credentials`)).body;
  const r = await runtime.exec(s.container_name, ['psql', '-h', '127.0.0.1', '-U', c.user, '-d', c.database, '-v', 'ON_ERROR_STOP=1', '-tA', '-c', statement], { env: { PGPASSWORD: c.password } });
  if (r.exitCode !== 0) throw new Error(`psql: ${r.stderr}`);
  return r.stdout.trim();
}

const envOf = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/cgi-bin/env`).catch(() => undefined);
  return res?.ok ? parseEnv(await res.text()) : undefined;
};

describe('svc restore on a fresh host', () => {
  it('brings back the app, its secret, its linked Postgres row and the API token, and serves', async () => {
    a = await startDaemonProcess('dr', serviceImageEnv());
    const appPort = await freePort();
    const pg = await a.api('POST', '/api/services', { name: 'dr-pg', type: 'postgres' });
    expect(pg.status).toBe(201);
    await waitFor(async () => (await a!.api('GET', `/api/services/${pg.body.id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'postgres active' });
    await psql(a.api, pg.body.id, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept across hosts')");

    const app = await a.api('POST', '/api/apps', { name: 'dr-web', image_ref: WEB_ENV, internal_port: WEB_PORT, access_mode: 'port', fallback_port: appPort, health_check_path: '/' });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    expect((await a.api('POST', `/api/apps/${app.body.id}/env`, { key: 'DR_SECRET', value: 's3cret-value', is_secret: true })).status).toBe(201);
    expect((await a.api('POST', `/api/apps/${app.body.id}/services`, { service_id: pg.body.id })).status).toBe(201);
    const deploy = await a.api('POST', `/api/apps/${app.body.id}/deploys`, {});
    expect(deploy.status).toBe(202);
    await waitFor(async () => (await a!.api('GET', `/api/deploys/${deploy.body.id}`)).body.status === 'success', { timeoutMs: 60_000, what: 'first deploy' });
    expect((await waitFor(() => envOf(appPort), { timeoutMs: 15_000 })).DR_SECRET).toBe('s3cret-value');

    const created = await a.api('POST', '/api/backups');
    expect(created.status).toBe(201);
    await waitFor(async () => {
      const row = (await a!.api('GET', `/api/backups/${created.body.id}`)).body;
      if (row.status === 'failed') throw new Error(row.error);
      return row.status === 'completed';
    }, { timeoutMs: 120_000, what: 'backup' });
    const download = await fetch(`${a.url}/api/backups/${created.body.id}/download`, { headers: { authorization: `Bearer ${a.token()}` } });
    expect(download.status).toBe(200);
    const archive = join(host2, 'host1-backup.tar.gz');
    await writeFile(archive, Buffer.from(await download.arrayBuffer()));
    const token = a.token();

    // The first host is lost: daemon, containers, network, helpers, Caddy and data directory.
    await a.close();
    a = undefined;

    // A fresh host: restore with no daemon, then start from the written .env (SVC_URL names a dead port).
    const dead = `http://127.0.0.1:${await freePort()}`;
    const restored = await svc(['restore', archive], host2, { SVC_URL: dead, SVC_DATA_DIR: join(host2, 'data') });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain('svc.db restored');
    bEnv = parseEnv(await readFile(join(host2, '.env'), 'utf8')) as Record<string, string>;
    expect(bEnv.SVC_DATA_DIR).toBe(join(host2, 'data'));

    caddy2 = await startCaddy();
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    b = spawn(process.execPath, ['--import', tsx, join(ROOT, 'src/cli.ts'), 'serve'], {
      cwd: host2,
      env: { PATH: process.env.PATH, HOME: host2, SVC_PROXY_ADMIN_URL: caddy2.adminUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    b.stdout!.on('data', (d: Buffer) => (bOut = (bOut + d).slice(-20_000)));
    b.stderr!.on('data', (d: Buffer) => (bOut = (bOut + d).slice(-20_000)));
    const url = `http://127.0.0.1:${bEnv.SVC_PORT}`;
    const api = async (method: string, path: string) => {
      const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: await res.json() };
    };
    await waitFor(async () => {
      if (b!.exitCode !== null) throw new Error(`restored daemon exited: ${bOut}`);
      return (await fetch(`${url}/healthz`).catch(() => undefined))?.ok;
    }, { timeoutMs: 30_000, what: 'restored daemon to listen' });

    expect((await api('GET', '/api/apps')).body.map((x: { name: string }) => x.name)).toEqual(['dr-web']);
    const served = await waitFor(() => envOf(appPort), { timeoutMs: 90_000, what: `the app served again (${bOut.slice(-2000)})` });
    expect(served.DR_SECRET).toBe('s3cret-value');
    expect(served.SQLA_HOST).toBe(pg.body.container_name);
    await waitFor(async () => (await api('GET', `/api/services/${pg.body.id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'postgres active again' });
    expect(await waitFor(() => psql(api, pg.body.id, 'SELECT body FROM notes'), { timeoutMs: 60_000, what: 'the row before the backup' })).toBe('kept across hosts');
  });
});
