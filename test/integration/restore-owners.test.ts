// Data that belongs to a non-root user, through a backup and a restore (issue 35): an app whose image runs
// as uid 1001 writing its volume, and a redis-type service whose image runs as uid 1001 (it could not even
// enter a root 700 data directory before). The real daemon, engine and Caddy; numeric owners and modes are
// read on the host before and after, and each still writes after the restore.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureUserImages, REDIS_UID1001, WEB_UID1001 } from '../support/user-images.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let port: number;

/** `uid:gid mode` of a path on the host (not following a link). */
const meta = (p: string) => {
  const st = lstatSync(p);
  return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8)}`;
};

beforeAll(async () => {
  await ensureUserImages(runtime);
  t = await startTestDaemon('owners', { SVC_IMAGE_REDIS: REDIS_UID1001 });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function backupAndRestore(): Promise<{ entries: Map<string, string> }> {
  const backup = await t.api('POST', '/api/backups');
  expect(backup.status, JSON.stringify(backup.body)).toBe(201);
  const entries = new Map<string, string>();
  await tar.t({ file: join(t.dataDir, 'backups', backup.body.filename), onReadEntry: (e) => void entries.set(e.path, `${e.uid}:${e.gid} ${((e.mode ?? 0) & 0o7777).toString(8)}`) });
  const restore = await t.api('POST', `/api/backups/${backup.body.id}/restore`);
  expect(restore.status, JSON.stringify(restore.body)).toBe(200);
  return { entries };
}

describe('an app whose image runs as uid 1001', () => {
  const vol = () => join(t.dataDir, 'volumes', 'uid-app', 'data');
  const write = async () => (await (await fetch(`http://127.0.0.1:${port}/cgi-bin/write`)).text()).trim();

  it('writes its volume, and after a backup and a restore its files are still its own and it still writes', async () => {
    port = await freePort();
    const res = await t.api('POST', '/api/apps', { name: 'uid-app', internal_port: 3000, access_mode: 'port', fallback_port: port, volumes: [{ name: 'data', mount_path: '/data' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await deployReaching(t, await requestImageDeploy(t, res.body.id, WEB_UID1001), (d) => d.status === 'success', 'to succeed');
    await waitFor(async () => (await write().catch(() => '')) === 'wrote', { timeoutMs: 20_000, what: 'the app to write its volume' });
    const before = { vol: meta(vol()), log: meta(join(vol(), 'log.txt')), sub: meta(join(vol(), 'sub')), more: meta(join(vol(), 'sub', 'more.txt')) };
    // The app's own: uid 1001, group 0 (no /etc/passwd in the image), its umask's modes; the volume svc's 0777.
    expect(before).toEqual({ vol: '0:0 777', log: '1001:0 644', sub: '1001:0 755', more: '1001:0 644' });
    const lines = readFileSync(join(vol(), 'log.txt'), 'utf8').split('\n').filter(Boolean).length;

    const { entries } = await backupAndRestore();
    expect(entries.get('volumes/uid-app/data/log.txt')).toBe('1001:0 644');
    expect(entries.get('volumes/uid-app/data/sub/')).toBe('1001:0 755');
    const after = { vol: meta(vol()), log: meta(join(vol(), 'log.txt')), sub: meta(join(vol(), 'sub')), more: meta(join(vol(), 'sub', 'more.txt')) };
    expect(after).toEqual(before);
    console.log(`[restore-owners] app volume before ${JSON.stringify(before)} after ${JSON.stringify(after)}`);
    // The app's container is recreated over the restored files, and it writes them again.
    await waitFor(async () => (await write().catch(() => '')) === 'wrote', { timeoutMs: 30_000, what: 'the app to write its restored volume' });
    expect(await write()).toBe('wrote');
    expect(readFileSync(join(vol(), 'log.txt'), 'utf8').split('\n').filter(Boolean).length).toBeGreaterThan(lines);
  }, 120_000);
});

describe('a redis-type service whose image runs as uid 1001', () => {
  it('starts (its directory is given to 1001), and after a backup and a restore its data is still its own and it still writes', async () => {
    const res = await t.api('POST', '/api/services', { name: 'uid-cache', type: 'redis' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id;
    const dir = res.body.data_dir as string;
    const container = res.body.container_name as string;
    await waitFor(async () => (await t.api('GET', `/api/services/${id}`)).body.status === 'active', { timeoutMs: 60_000, what: 'the service to be active' });
    const aof = join(dir, 'appendonly.aof');
    const before = { dir: meta(dir), aof: meta(aof) };
    expect(before).toEqual({ dir: '1001:0 700', aof: '1001:0 644' });
    const lines = readFileSync(aof, 'utf8').split('\n').filter(Boolean).length;

    const { entries } = await backupAndRestore();
    expect(entries.get('services/uid-cache/')).toBe('1001:0 700');
    expect(entries.get('services/uid-cache/appendonly.aof')).toBe('1001:0 644');
    // The restore removed the container; the reconciler makes it again over the restored directory, and the
    // readiness check (a write to /data as 1001) passes only if the service still writes there.
    await waitFor(async () => {
      const s = (await t.api('GET', `/api/services/${id}`)).body;
      return s.status === 'active' && (await runtime.inspect(container))?.running;
    }, { timeoutMs: 60_000, what: 'the restored service to be active' });
    const after = { dir: meta(dir), aof: meta(aof) };
    expect(after).toEqual(before);
    console.log(`[restore-owners] service data before ${JSON.stringify(before)} after ${JSON.stringify(after)}`);
    const ping = await runtime.exec(container, ['redis-cli', 'ping']);
    expect(ping.stdout.trim()).toBe('PONG');
    const text = readFileSync(aof, 'utf8');
    expect(text.split('\n').filter(Boolean).length).toBeGreaterThan(lines);
    expect(text).toContain('as 1001:0');
  }, 180_000);
});

