// Off-host copy benchmark: a backup of --mb MiB (incompressible bytes in the data dir, so the archive is
// that big), copied by the daemon to the S3 stand-in (encrypted, hashed, uploaded, read back and verified),
// beside the same archive file uploaded by hand with the SDK (lib-storage, same part size and queue).
// Reports both times, their ratio, and the daemon's RSS before and at its peak during the copy. The
// daemon runs in this process (test/support/daemon.ts), so its RSS is this process's; the by-hand upload
// runs after, not during, the measurement.
//
//   npm run bench:offsite -- [--mb 200] [--work-factor 18] [--recipient]
//
// Bounded: every wait has a deadline; at the end (even on error) the daemon, the store and dirs go.
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Upload } from '@aws-sdk/lib-storage';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { s3ClientFor } from '../src/offsite/s3.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { startS3Standin, type S3Standin } from '../test/support/s3-standin.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, numFlag, runMain, secs } from './common.js';

const MB = numFlag('mb', 200, 1, 4000);
const WORK = numFlag('work-factor', 18, 10, 22);
const RECIPIENT = process.argv.includes('--recipient');

const cleanups: (() => Promise<unknown>)[] = [];
const cleanup = (f: () => Promise<unknown>) => void cleanups.push(f);

runMain(async () => {
  try {
  const s3: S3Standin = await startS3Standin('svc-bench');
  cleanup(() => s3.stop());
  const env: Record<string, string> = { SVC_BACKUP_SCRYPT_WORK_FACTOR: String(WORK) };
  if (RECIPIENT) env.SVC_BACKUP_AGE_RECIPIENT = await identityToRecipient(await generateIdentity());
  else env.SVC_BACKUP_PASSPHRASE = 'bench passphrase';
  const d: TestDaemon = await startTestDaemon('bench-offsite', env);
  cleanup(() => d.close());

  const blob = join(d.dataDir, 'services', 'bench-blob');
  await mkdir(blob, { recursive: true });
  for (let i = 0; i < MB / 16; i++) await writeFile(join(blob, `part-${i}`), randomBytes(16 * 1024 * 1024));
  log(`wrote ${MB} MiB of incompressible data; load ${await loadAvg()}`);
  const created = await d.api('POST', '/api/backups');
  if (created.status !== 201) throw new Error(`backup: ${JSON.stringify(created.body)}`);
  const b = created.body;
  log(`backup ${b.filename}: ${(b.size_bytes / 1048576).toFixed(1)} MiB`);

  const target = await d.api('POST', '/api/backup-targets', {
    name: 'bench', endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: 'svc/', access_key: s3.accessKey, secret_key: s3.secretKey,
  });
  if (target.status !== 201) throw new Error(JSON.stringify(target.body));
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = Date.now();
  await d.api('POST', `/api/backups/${b.id}/upload`);
  const done = await waitFor(
    async () => {
      const r = (await d.api('GET', `/api/backups/${b.id}`)).body;
      if (r.remote_status === 'remote_failed') throw new Error(r.remotes[0].error);
      return r.remote_status === 'verified' ? r : undefined;
    },
    { timeoutMs: 1_800_000, intervalMs: 100, what: 'the copy verified' },
  );
  const ours = Date.now() - t0;
  clearInterval(sampler);

  const client = s3ClientFor({ name: 'hand', endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: '', accessKey: s3.accessKey, secretKey: s3.secretKey });
  const t1 = Date.now();
  await new Upload({ client, params: { Bucket: s3.bucket, Key: 'by-hand/archive.tar.gz', Body: createReadStream(join(d.dataDir, 'backups', b.filename)) }, partSize: 8 * 1024 * 1024, queueSize: 2 }).done();
  const hand = Date.now() - t1;
  client.destroy();

  const mib = (n: number) => `${(n / 1048576).toFixed(0)} MiB`;
  console.log(`archive ${mib(b.size_bytes)}, copy ${mib(done.remote.size_bytes ?? done.remotes[0].size_bytes)} (${RECIPIENT ? 'age recipient' : `passphrase, scrypt 2^${WORK}`})`);
  console.log(`svc copy (encrypt + SHA-256 + upload + read back + verify): ${secs(ours)}`);
  console.log(`same archive uploaded by hand with lib-storage:             ${secs(hand)}   ratio ${(ours / hand).toFixed(2)}x`);
  console.log(`daemon RSS before ${mib(base)}, peak during the copy ${mib(peak)} (+${mib(peak - base)})`);
  console.log(`load average ${await loadAvg()}`);
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
});
