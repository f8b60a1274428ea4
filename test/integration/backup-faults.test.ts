// Faults while a backup is written: the daemon process killed mid-archive, and a backup dir that fills
// up. Neither publishes an archive; the record ends `failed` with the reason; no work file is left.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { startCaddy, type TestCaddy } from '../support/caddy.js';
import { isolatedDaemonEnv, removeInstance, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** Fills `dir` with `mb` MiB of incompressible data, so writing the archive takes a while. */
async function blob(dir: string, mb: number) {
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < mb / 16; i++) await writeFile(join(dir, `blob-${i}`), randomBytes(16 * 1024 * 1024));
}

describe('a daemon killed while it writes an archive', () => {
  it('publishes nothing; after restart the record is failed with the reason and no work file is left', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-bk-crash-'));
    const caddy: TestCaddy = await startCaddy();
    const instance = `test-bkcrash-${process.pid}`;
    const network = `svc-test-bkcrash-${process.pid}`;
    let child: ChildProcess | undefined;
    cleanups.push(async () => {
      child?.kill('SIGKILL');
      await removeInstance(instance, network);
      await stopHelpersOf(dataDir);
      await caddy.stop();
      await rm(dataDir, { recursive: true, force: true });
    });
    const env = { ...process.env, ...(await isolatedDaemonEnv({ dataDir, caddyAdminUrl: caddy.adminUrl, network, instance })) };
    const url = `http://127.0.0.1:${env.SVC_PORT}`;
    const start = async () => {
      child = spawn(process.execPath, ['--import', resolve('node_modules/tsx/dist/loader.mjs'), resolve('src/cli.ts'), 'serve'], { cwd: dataDir, env, stdio: 'ignore' });
      await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok, { timeoutMs: 60_000 });
    };
    await blob(join(dataDir, 'services', 'bk-crash'), 192);
    await start();
    const setup = await fetch(`${url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'correct horse battery' }) });
    const cookie = setup.headers.get('set-cookie')!.split(';')[0];
    const headers = { cookie, 'content-type': 'application/json' };
    // A client that polls: 202 with the running record at once.
    const created = await (await fetch(`${url}/api/backups?wait=false`, { method: 'POST', headers })).json();
    expect(created.status).toBe('running');

    const backupDir = join(dataDir, 'backups');
    const partial = join(backupDir, `.${created.filename}.partial`);
    await waitFor(async () => ((await stat(partial).catch(() => undefined))?.size ?? 0) > 1024 * 1024, { timeoutMs: 60_000, intervalMs: 10 });
    child!.kill('SIGKILL');
    await once(child!, 'exit');
    expect((await readdir(backupDir)).filter((f) => !f.startsWith('.'))).toEqual([]);

    await start();
    const list = await (await fetch(`${url}/api/backups`, { headers })).json();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: created.id, status: 'failed', size_bytes: 0 });
    expect(list[0].error).toMatch(/interrupted/);
    expect(await readdir(backupDir)).toEqual([]);
    child!.kill('SIGTERM');
    await once(child!, 'exit');
  });
});

describe('a full backup disk', () => {
  it('fails the backup with the reason and publishes nothing; with room again the next one completes', async () => {
    const mnt = await mkdtemp(join(tmpdir(), 'svc-bk-tmpfs-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=700', 'tmpfs', mnt]);
    cleanups.push(async () => {
      await run('umount', [mnt]);
      await rm(mnt, { recursive: true, force: true });
    });
    const d: TestDaemon = await startTestDaemon('bkdisk', { SVC_BACKUP_DIR: mnt });
    cleanups.push(() => d.close());
    await blob(join(d.dataDir, 'services', 'bk-fill'), 16);

    // The create waits for the archive and answers its failure: 500 backup_failed with the failed record.
    const res = await d.api('POST', '/api/backups');
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('backup_failed');
    const failed = (await d.api('GET', `/api/backups/${res.body.id}`)).body;
    expect(failed).toMatchObject({ status: 'failed', size_bytes: 0, error: res.body.error });
    expect(failed.error).toMatch(/no space left/);
    expect(await readdir(mnt)).toEqual([]);

    await rm(join(d.dataDir, 'services', 'bk-fill'), { recursive: true });
    const again = await d.api('POST', '/api/backups');
    expect(again.status).toBe(201);
    const done = again.body;
    expect(done.status).toBe('completed');
    expect(await readdir(mnt)).toEqual([done.filename]);
  });
});
