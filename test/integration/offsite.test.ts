// Off-host copies (issue 21 section 1) against the svc-test Garage stand-in run on loopback: the target's
// test action, every completed backup uploaded encrypted and verified (read back on this Garage v1
// stand-in, the store's SHA-256 checksum on one that reports checksums), Debian's `age -d`
// opening it, remote retention, and the faults (wrong credentials, a missing bucket, the store killed
// mid-upload, a copy that reads back corrupted): recorded with the store's reason, local archive kept,
// retried, no partial object under the final key. Then a restore into a fresh data dir from the bucket
// alone, through the CLI.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3ClientFor } from '../../src/offsite/s3.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { startS3Standin, type S3Standin } from '../support/s3-standin.js';
import { waitFor } from '../support/wait.js';

const PASSPHRASE = 'offsite test passphrase 7c1e';
let t: TestDaemon;
let s3: S3Standin;
let target: { id: number; name: string };
/** The stand-in that reports SHA-256 checksums (AWS S3, MinIO), started by the test that first needs it. */
let sums: S3Standin;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  s3 = await startS3Standin();
  cleanups.push(() => s3.stop());
  t = await startTestDaemon('offsite', {
    SVC_BACKUP_PASSPHRASE: PASSPHRASE,
    SVC_BACKUP_REMOTE_RETAIN_COUNT: '2',
    SVC_BACKUP_REMOTE_RETRY_SECONDS: '1',
    // age's default 18 costs seconds per upload on a loaded CI machine; Debian's age opens any factor.
    SVC_BACKUP_SCRYPT_WORK_FACTOR: '12',
  });
  cleanups.push(() => t.close());
}, 60_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

const targetBody = (over: Record<string, unknown> = {}) => ({
  name: 'standin',
  endpoint: s3.endpoint,
  region: s3.region,
  bucket: s3.bucket,
  prefix: 'svc/',
  access_key: s3.accessKey,
  secret_key: s3.secretKey,
  ...over,
});

const client = () => s3ClientFor({ name: 'x', endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: '', accessKey: s3.accessKey, secretKey: s3.secretKey });

async function keysInBucket(prefix = 'svc/'): Promise<string[]> {
  const c = client();
  try {
    const res = await c.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
    return (res.Contents ?? []).map((o) => o.Key!).sort();
  } finally {
    c.destroy();
  }
}

async function objectBytes(key: string): Promise<Buffer> {
  return objectBytesFrom(s3, key);
}

async function objectBytesFrom(store: S3Standin, key: string): Promise<Buffer> {
  const c = s3ClientFor({ name: 'x', endpoint: store.endpoint, region: store.region, bucket: store.bucket, prefix: '', accessKey: store.accessKey, secretKey: store.secretKey });
  try {
    const res = await c.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
    return Buffer.from(await res.Body!.transformToByteArray());
  } finally {
    c.destroy();
  }
}

/** A backup, created and waited for (201), then its remote state once `pred` holds. */
async function backupUntil(pred: (b: any) => boolean, what: string, timeoutMs = 30_000) {
  const created = await t.api('POST', '/api/backups');
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return recordUntil(created.body.id, pred, what, timeoutMs);
}

const recordUntil = (id: number, pred: (b: any) => boolean, what: string, timeoutMs = 30_000) =>
  waitFor(
    async () => {
      const r = await t.api('GET', `/api/backups/${id}`);
      return pred(r.body) ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 50, what: what },
  );

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('backup targets', () => {
  it('refuses bad fields, answers the store own error on test, and never shows the secret', async () => {
    expect((await t.api('POST', '/api/backup-targets', targetBody({ bucket: 'Bad_Bucket' }))).status).toBe(400);
    expect((await t.api('POST', '/api/backup-targets', targetBody({ endpoint: 'ftp://x' }))).status).toBe(400);
    const wrong = await t.api('POST', '/api/backup-targets', targetBody({ name: 'wrong-key', secret_key: 'not-the-secret' }));
    expect(wrong.status).toBe(201);
    expect(JSON.stringify(wrong.body)).not.toContain('not-the-secret');
    const test1 = await t.api('POST', `/api/backup-targets/${wrong.body.id}/test`);
    expect(test1.status).toBe(502);
    expect(test1.body).toMatchObject({ code: 'target_test_failed', details: { step: 'write' } });
    expect(test1.body.details.store_error).toMatch(/HTTP 403/);
    const missing = await t.api('POST', '/api/backup-targets', targetBody({ name: 'missing', bucket: 'no-such-bucket' }));
    const test2 = await t.api('POST', `/api/backup-targets/${missing.body.id}/test`);
    expect(test2.status).toBe(502);
    expect(test2.body.details.store_error).toMatch(/NoSuchBucket/);
    for (const id of [wrong.body.id, missing.body.id]) expect((await t.api('DELETE', `/api/backup-targets/${id}`)).status).toBe(204);

    const ok = await t.api('POST', '/api/backup-targets', targetBody());
    expect(ok.status).toBe(201);
    target = ok.body;
    const test3 = await t.api('POST', `/api/backup-targets/${target.id}/test`);
    expect(test3.status, JSON.stringify(test3.body)).toBe(200);
    expect(test3.body.ok).toBe(true);
    expect(await keysInBucket('')).toEqual([]); // the test object is gone
    const sealed = t.daemon.db.$client.prepare('SELECT credentials FROM backup_targets WHERE id = ?').get(target.id) as { credentials: string };
    expect(sealed.credentials).not.toContain(s3.secretKey);
  });

  it('uploads every completed backup encrypted, verified by its SHA-256; Debian age decrypts it to the local archive', async () => {
    const b = await backupUntil((x) => x.remote_status === 'verified', 'the copy verified');
    // The default stand-in is Garage v1: no store checksums, so the copy is read back.
    expect(b.remote).toMatchObject({ target: 'standin', key: `svc/${b.filename}.age`, verified_by: 'read_back' });
    const held = await objectBytes(b.remote.key);
    expect(sha256(held)).toBe(b.remote.sha256);
    expect(held.subarray(0, 21).toString()).toBe('age-encryption.org/v1');

    const dir = await mkdtemp(join(tmpdir(), 'svc-age-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'copy.age'), held);
    // Debian's age reads a passphrase from the terminal only: `script` gives it one, fed from our stdin.
    const code = await new Promise<number>((done) => {
      const p = spawn('script', ['-qec', `age -d -o ${join(dir, 'plain.tar.gz')} ${join(dir, 'copy.age')}`, '/dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] });
      p.stdin.end(`${PASSPHRASE}\n`);
      const timer = setTimeout(() => p.kill('SIGKILL'), 20_000);
      p.on('exit', (c) => {
        clearTimeout(timer);
        done(c ?? 1);
      });
    });
    expect(code).toBe(0);
    const local = Buffer.from(await (await fetch(`${t.url}/api/backups/${b.id}/download`, { headers: { authorization: `Bearer ${t.token}` } })).arrayBuffer());
    expect(sha256(await readFile(join(dir, 'plain.tar.gz')))).toBe(sha256(local));
  }, 40_000);

  it('keeps SVC_BACKUP_REMOTE_RETAIN_COUNT copies in the bucket and marks the rest removed', async () => {
    const b2 = await backupUntil((x) => x.remote_status === 'verified', 'second copy');
    const b3 = await backupUntil((x) => x.remote_status === 'verified', 'third copy');
    expect(await keysInBucket()).toEqual([`svc/${b2.filename}.age`, `svc/${b3.filename}.age`]);
    const list = (await t.api('GET', '/api/backups')).body as any[];
    const oldest = list[list.length - 1];
    expect(oldest.remote_status).toBe('removed');
    expect(oldest.remote).toBeNull();
    const remote = await t.api('GET', `/api/backup-targets/${target.id}/remote`);
    expect(remote.body.map((x: any) => x.filename)).toEqual([b3.filename, b2.filename]);
  }, 40_000);

  it('a copy that reads back corrupted is deleted, recorded remote_failed with the reason, kept locally, and retried', async () => {
    const before = await keysInBucket();
    await s3.corruptNextGet();
    const created = await t.api('POST', '/api/backups');
    const failed = await recordUntil(created.body.id, (x) => x.remote_status === 'remote_failed', 'remote_failed');
    expect(failed.status).toBe('completed');
    expect(failed.remote).toBeNull();
    expect(failed.remotes[0].error).toMatch(/^verification: the store holds/);
    expect((await keysInBucket()).includes(`svc/${failed.filename}.age`)).toBe(false);
    expect(before.length).toBe(2);
    expect((await fetch(`${t.url}/api/backups/${failed.id}/download`, { headers: { authorization: `Bearer ${t.token}` } })).status).toBe(200);
    const healed = await recordUntil(failed.id, (x) => x.remote_status === 'verified', 'retried and verified');
    expect(healed.remotes[0].attempts).toBe(2);
    expect(sha256(await objectBytes(healed.remote.key))).toBe(healed.remote.sha256);
  }, 40_000);

  it('wrong credentials: remote_failed with the store reason, then fixed credentials let the retry verify', async () => {
    expect((await t.api('PUT', `/api/backup-targets/${target.id}`, { secret_key: 'wrong-secret-now' })).status).toBe(200);
    const created = await t.api('POST', '/api/backups');
    const failed = await recordUntil(created.body.id, (x) => x.remote_status === 'remote_failed', 'remote_failed');
    expect(failed.remotes[0].error).toMatch(/HTTP 403/);
    expect(failed.remotes[0].error).not.toContain('wrong-secret-now');
    expect((await t.api('PUT', `/api/backup-targets/${target.id}`, { secret_key: s3.secretKey })).status).toBe(200);
    await recordUntil(failed.id, (x) => x.remote_status === 'verified', 'verified after the fix');
  }, 40_000);

  it('a missing bucket: remote_failed with NoSuchBucket, local archive kept, verified once the bucket is right', async () => {
    expect((await t.api('PUT', `/api/backup-targets/${target.id}`, { bucket: 'no-such-bucket' })).status).toBe(200);
    const created = await t.api('POST', '/api/backups');
    const failed = await recordUntil(created.body.id, (x) => x.remote_status === 'remote_failed', 'remote_failed');
    expect(failed.remotes[0].error).toMatch(/NoSuchBucket/);
    expect((await fetch(`${t.url}/api/backups/${failed.id}/download`, { headers: { authorization: `Bearer ${t.token}` } })).status).toBe(200);
    expect((await t.api('PUT', `/api/backup-targets/${target.id}`, { bucket: s3.bucket })).status).toBe(200);
    await recordUntil(failed.id, (x) => x.remote_status === 'verified', 'verified in the right bucket');
  }, 40_000);

  it('the store killed mid-upload: no object under the final key, no unfinished upload after the retry, then verified', async () => {
    // An archive big enough to be several parts.
    const blobDir = join(t.dataDir, 'services', 'offsite-blob');
    await mkdir(blobDir, { recursive: true });
    await writeFile(join(blobDir, 'blob'), randomBytes(20 * 1024 * 1024));
    const created = await t.api('POST', '/api/backups');
    await rm(blobDir, { recursive: true, force: true });
    await waitFor(() => s3.pendingUploads().length > 0 || undefined, { timeoutMs: 20_000, intervalMs: 10, what: 'a multipart upload started' });
    await s3.kill();
    const failed = await recordUntil(created.body.id, (x) => x.remote_status === 'remote_failed', 'remote_failed');
    expect(failed.remotes[0].error).toMatch(/^upload: /);
    await s3.start();
    const done = await recordUntil(failed.id, (x) => x.remote_status === 'verified', 'verified after the store came back', 45_000);
    expect(s3.pendingUploads()).toEqual([]);
    expect(sha256(await objectBytes(done.remote.key))).toBe(done.remote.sha256);
  }, 60_000);

  it('restores a fresh data dir from the bucket alone (svc restore s3://... --latest), and imports a copy into a running install', async () => {
    const newest = (await t.api('GET', `/api/backup-targets/${target.id}/remote`)).body[0];
    const imported = await t.api('POST', `/api/backup-targets/${target.id}/remote/import`, { key: newest.key });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body.trigger).toBe('import');

    const host = await mkdtemp(join(tmpdir(), 'svc-fresh-host-'));
    cleanups.push(() => rm(host, { recursive: true, force: true }));
    const env = {
      PATH: process.env.PATH!,
      HOME: host,
      SVC_DATA_DIR: join(host, 'data'),
      SVC_URL: 'http://127.0.0.1:9', // nothing answers: offline restore
      SVC_BACKUP_S3_ENDPOINT: s3.endpoint,
      SVC_BACKUP_S3_REGION: s3.region,
      AWS_ACCESS_KEY_ID: s3.accessKey,
      AWS_SECRET_ACCESS_KEY: s3.secretKey,
      SVC_BACKUP_PASSPHRASE: PASSPHRASE,
    };
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolveRun) => {
      const p = spawn(process.execPath, ['--import', resolve('node_modules/tsx/dist/loader.mjs'), resolve('src/cli.ts'), 'restore', `s3://${s3.bucket}/svc/`, '--latest'], { cwd: host, env });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      p.on('exit', (code) => resolveRun({ code: code ?? 1, stdout, stderr }));
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(newest.key);
    expect(existsSync(join(host, 'data', 'svc.db'))).toBe(true);
    const restoredEnv = await readFile(join(host, '.env'), 'utf8');
    const original = await readFile(join(t.dataDir, '.env'), 'utf8').catch(() => '');
    const keyOf = (s: string) => /SVC_ENCRYPTION_KEY=(.*)/.exec(s)?.[1];
    expect(keyOf(restoredEnv)).toBeTruthy();
    if (keyOf(original)) expect(keyOf(restoredEnv)).toBe(keyOf(original));
    expect(restoredEnv).not.toContain(PASSPHRASE);
  }, 60_000);

  it('refuses to import a copy changed in the bucket (age authenticates every chunk): 422 copy_corrupted, nothing kept', async () => {
    const copies = (await t.api('GET', `/api/backup-targets/${target.id}/remote`)).body;
    const victim = copies[copies.length - 1];
    const file = s3.objectFiles().find((f) => f.endsWith(createHash('sha256').update(victim.key).digest('hex')))!;
    const bytes = await readFile(file);
    bytes[bytes.length >> 1] ^= 0xff;
    await writeFile(file, bytes);
    const before = (await t.api('GET', '/api/backups')).body.length;
    const res = await t.api('POST', `/api/backup-targets/${target.id}/remote/import`, { key: victim.key });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.code).toBe('copy_corrupted');
    expect((await t.api('GET', '/api/backups')).body.length).toBe(before);
  }, 30_000);

  it('a store that reports SHA-256 checksums verifies by its checksum (no read back); a copy it stores damaged is caught, deleted and retried', async () => {
    sums = await startS3Standin('svc-offsite-sums', { checksums: true });
    cleanups.push(() => sums.stop());
    const moved = await t.api('PUT', `/api/backup-targets/${target.id}`, { endpoint: sums.endpoint, bucket: sums.bucket, access_key: sums.accessKey, secret_key: sums.secretKey });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const b = await backupUntil((x) => x.remote_status === 'verified', 'verified by the store checksum');
    expect(b.remote.verified_by).toBe('store_checksum');

    await sums.corruptNextWrite();
    const created = await t.api('POST', '/api/backups');
    const failed = await recordUntil(created.body.id, (x) => x.remote_status === 'remote_failed', 'remote_failed');
    expect(failed.remotes[0].error).toMatch(/^verification: the store reports/);
    expect(sums.objectFiles().some((f) => f.endsWith(createHash('sha256').update(`svc/${failed.filename}.age`).digest('hex')))).toBe(false);
    const healed = await recordUntil(failed.id, (x) => x.remote_status === 'verified', 'retried and verified');
    expect(healed.remote.verified_by).toBe('store_checksum');
  }, 40_000);

  it('a part refused mid-upload: the upload is aborted at once (no unfinished upload, no object), then a multipart copy verifies by the composite checksum', async () => {
    // The target is on the checksum store (previous test). An archive of several 8 MiB parts.
    const blobDir = join(t.dataDir, 'services', 'offsite-parts');
    await mkdir(blobDir, { recursive: true });
    await writeFile(join(blobDir, 'blob'), randomBytes(20 * 1024 * 1024));
    await sums.refuseParts(true);
    const created = await t.api('POST', '/api/backups');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await rm(blobDir, { recursive: true, force: true });
    // Sampled between two reads of the same failed attempt, so no retry (whose first step would abort a
    // leftover upload itself) has begun: what is seen is what the failed attempt left.
    const seen = await waitFor(
      async () => {
        const a = (await t.api('GET', `/api/backups/${created.body.id}`)).body;
        if (a.remote_status !== 'remote_failed') return undefined;
        const pending = sums.pendingUploads();
        const b = (await t.api('GET', `/api/backups/${created.body.id}`)).body;
        return b.remote_status === 'remote_failed' && b.remotes[0].attempts === a.remotes[0].attempts ? { pending, row: b } : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 20, what: 'a failed attempt, sampled' },
    );
    expect(seen.row.remotes[0].error).toMatch(/^upload: InvalidRequest \(HTTP 400\): svc-test fault: part refused/);
    expect(seen.pending).toEqual([]);
    const key = `svc/${seen.row.filename}.age`;
    expect(sums.objectFiles().some((f) => f.endsWith(createHash('sha256').update(key).digest('hex')))).toBe(false);
    await sums.refuseParts(false);
    const done = await recordUntil(created.body.id, (x) => x.remote_status === 'verified', 'verified once parts are taken', 30_000);
    expect(done.remote.verified_by).toBe('store_checksum');
    expect(done.remotes[0].size_bytes).toBeGreaterThan(16 * 1024 * 1024); // three parts: a composite checksum
    expect(sha256(await objectBytesFrom(sums, done.remote.key))).toBe(done.remote.sha256);
    expect(sums.pendingUploads()).toEqual([]);
  }, 60_000);
});
