// Off-host copy benchmark: a backup of --mb MiB (incompressible bytes in the data dir, so the archive is
// that big), copied by the daemon to the S3 stand-in (encrypted, hashed, uploaded, verified), beside the
// same archive uploaded by hand with the SDK (lib-storage, same client settings, part size and queue).
// For each key kind (passphrase, then age recipient) it alternates: svc copy, by-hand upload, by-hand,
// svc, ... (--rounds pairs), and prints each pair's ratio, then the ranges. Peak memory is the daemon's:
// it runs in this process (test/support/daemon.ts), so this process's RSS, sampled every 20 ms during the
// svc copy only, against the RSS just before it.
//
//   npm run bench:offsite -- [--mb 200] [--rounds 3] [--work-factor 18] [--read-back] [--only passphrase|recipient]
//
// The stand-in reports S3 SHA-256 checksums (as AWS S3 and MinIO do), so svc verifies by the store's
// checksum; --read-back runs it as Garage v1 (no checksums), where svc reads the copy back.
// Bounded: every wait has a deadline; at the end (even on error) the daemons, the store and dirs go.
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { storageSdk } from '../src/offsite/sdk.js';
import { s3ClientFor } from '../src/offsite/s3.js';
import { PART_SIZE, QUEUE } from '../src/offsite/upload.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { startS3Standin, type S3Standin } from '../test/support/s3-standin.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, numFlag, runMain, secs } from './common.js';

const MB = numFlag('mb', 200, 1, 4000);
const ROUNDS = numFlag('rounds', 3, 1, 10);
const WORK = numFlag('work-factor', 18, 10, 22);
const READ_BACK = process.argv.includes('--read-back');
const onlyAt = process.argv.indexOf('--only');
const MODES = (onlyAt >= 0 ? [process.argv[onlyAt + 1]] : ['passphrase', 'recipient']) as ('passphrase' | 'recipient')[];

const cleanups: (() => Promise<unknown>)[] = [];
const mib = (n: number) => `${(n / 1048576).toFixed(0)} MiB`;
const range = (xs: number[], f: (x: number) => string) => `${f(Math.min(...xs))} .. ${f(Math.max(...xs))}`;

interface Pair {
  svc: number;
  hand: number;
  peak: number;
  verifiedBy: string;
}

async function benchMode(s3: S3Standin, mode: 'passphrase' | 'recipient'): Promise<Pair[]> {
  const env: Record<string, string> = { SVC_BACKUP_SCRYPT_WORK_FACTOR: String(WORK) };
  if (mode === 'recipient') env.SVC_BACKUP_AGE_RECIPIENT = await identityToRecipient(await generateIdentity());
  else env.SVC_BACKUP_PASSPHRASE = 'bench passphrase';
  const d: TestDaemon = await startTestDaemon(`bench-off-${mode.slice(0, 4)}`, env);
  try {
    const blob = join(d.dataDir, 'services', 'bench-blob');
    await mkdir(blob, { recursive: true });
    for (let i = 0; i < MB / 16; i++) await writeFile(join(blob, `part-${i}`), randomBytes(16 * 1024 * 1024));
    const created = await d.api('POST', '/api/backups');
    if (created.status !== 201) throw new Error(`backup: ${JSON.stringify(created.body)}`);
    const b = created.body;
    log(`${mode}: backup ${b.filename}: ${mib(b.size_bytes)}`);
    const archive = join(d.dataDir, 'backups', b.filename);
    const client = s3ClientFor({ name: 'hand', endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: '', accessKey: s3.accessKey, secretKey: s3.secretKey });

    const svcCopy = async (round: number) => {
      // A new target (prefix) per round: the earlier rounds' copies stay verified and are not redone.
      const target = await d.api('POST', '/api/backup-targets', {
        name: `bench-${round}`, endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, prefix: `${mode}-${round}/`, access_key: s3.accessKey, secret_key: s3.secretKey,
      });
      if (target.status !== 201) throw new Error(JSON.stringify(target.body));
      global.gc?.();
      const base = process.memoryUsage().rss;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      const t0 = Date.now();
      await d.api('POST', `/api/backups/${b.id}/upload`);
      const row = await waitFor(
        async () => {
          const r = (await d.api('GET', `/api/backups/${b.id}`)).body.remotes.find((x: { target: string }) => x.target === `bench-${round}`);
          if (r?.status === 'remote_failed') throw new Error(r.error);
          return r?.status === 'verified' ? r : undefined;
        },
        { timeoutMs: 1_800_000, intervalMs: 100, what: 'the copy verified' },
      );
      const took = Date.now() - t0;
      clearInterval(sampler);
      return { took, peak: peak - base, verifiedBy: String(row.verified_by) };
    };
    const byHand = async (round: number) => {
      const t1 = Date.now();
      await new (storageSdk().Upload)({
        client,
        params: { Bucket: s3.bucket, Key: `by-hand/${mode}-${round}.tar.gz`, Body: createReadStream(archive) },
        partSize: PART_SIZE,
        queueSize: QUEUE,
      }).done();
      return Date.now() - t1;
    };

    const pairs: Pair[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const svcFirst = round % 2 === 1;
      let hand = svcFirst ? 0 : await byHand(round);
      const svc = await svcCopy(round);
      if (svcFirst) hand = await byHand(round);
      pairs.push({ svc: svc.took, hand, peak: svc.peak, verifiedBy: svc.verifiedBy });
      log(`${mode} round ${round} (${svcFirst ? 'svc first' : 'by hand first'}): svc ${secs(svc.took)} (verified by ${svc.verifiedBy}), by hand ${secs(hand)}, ratio ${(svc.took / hand).toFixed(2)}x, daemon peak +${mib(svc.peak)}; ${await loadAvg()}`);
    }
    client.destroy();
    return pairs;
  } finally {
    await d.close();
  }
}

runMain(async () => {
  try {
    const s3: S3Standin = await startS3Standin('svc-bench', { checksums: !READ_BACK });
    cleanups.push(() => s3.stop());
    log(`start; ${await loadAvg()}`);
    const results: [string, Pair[]][] = [];
    for (const mode of MODES) results.push([mode, await benchMode(s3, mode)]);
    console.log(`archive ${MB} MiB of random bytes; store: stand-in ${READ_BACK ? 'as Garage v1 (no checksums: read back)' : 'reporting SHA-256 checksums'}; part ${mib(PART_SIZE)} x ${QUEUE} in flight; ${ROUNDS} rounds, svc and by hand alternating`);
    for (const [mode, pairs] of results) {
      const label = mode === 'passphrase' ? `passphrase (scrypt 2^${WORK}, once per process)` : 'age recipient';
      console.log(`${label}:`);
      console.log(`  svc copy (encrypt + SHA-256 + upload + verify): ${range(pairs.map((p) => p.svc), secs)}   [${pairs.map((p) => secs(p.svc)).join(', ')}]`);
      console.log(`  same archive by hand with lib-storage:          ${range(pairs.map((p) => p.hand), secs)}   [${pairs.map((p) => secs(p.hand)).join(', ')}]`);
      console.log(`  ratio per pair: ${range(pairs.map((p) => p.svc / p.hand), (x) => `${x.toFixed(2)}x`)}   [${pairs.map((p) => `${(p.svc / p.hand).toFixed(2)}x`).join(', ')}]`);
      console.log(`  daemon peak RSS over the RSS before the copy: ${range(pairs.map((p) => p.peak), mib)}; verified by ${[...new Set(pairs.map((p) => p.verifiedBy))].join(', ')}`);
    }
    console.log(`${await loadAvg()}`);
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
});
