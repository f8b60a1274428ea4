// Off-host copy benchmark: a backup of --mb MiB (incompressible bytes in the data dir, so the archive is
// that big), copied by the daemon to the S3 stand-in (encrypted, hashed, uploaded, verified), beside the
// same archive uploaded by hand with the SDK (lib-storage, same client settings, part size and queue).
// For each key kind (passphrase, then age recipient) it alternates: svc copy, by-hand upload, by-hand,
// svc, ... (--rounds pairs), and prints each pair's ratio, then the ranges. Peak memory is the daemon's:
// it runs in this process (test/support/daemon.ts), so this process's RSS, sampled every 20 ms during the
// svc copy only, against the RSS just before it. CPU time (this process + the store's) is printed beside
// the wall times: on this shared machine the wall times swing 2-3x with the load, CPU time much less.
//
//   npm run bench:offsite -- [--mb 200] [--rounds 3] [--work-factor 18] [--read-back] [--hand-sha256] [--only passphrase|recipient]
//
// The stand-in reports S3 SHA-256 checksums (as AWS S3 and MinIO do), so svc verifies by the store's
// checksum; --read-back runs it as Garage v1 (no checksums), where svc reads the copy back.
// Bounded: every wait has a deadline; at the end (even on error) the daemons, the store and dirs go.
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { Upload } from '@aws-sdk/lib-storage';
import { s3ClientFor } from '../src/offsite/s3.js';
import { PART_SIZE, QUEUE } from '../src/offsite/upload.js';
import { isOffsiteWarm } from '../src/offsite/warm.js';
import { uploadsOf } from '../src/store/offsite.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { startS3Standin, type S3Standin } from '../test/support/s3-standin.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, numFlag, runMain, secs } from './common.js';

const MB = numFlag('mb', 200, 1, 4000);
const ROUNDS = numFlag('rounds', 3, 1, 10);
const WORK = numFlag('work-factor', 18, 10, 22);
const READ_BACK = process.argv.includes('--read-back');
/** The hand upload asks the SDK for each part's SHA-256 too (the integrity svc's copy has), not a bare upload. */
const HAND_SHA256 = process.argv.includes('--hand-sha256');
const onlyAt = process.argv.indexOf('--only');
const MODES = (onlyAt >= 0 ? [process.argv[onlyAt + 1]] : ['passphrase', 'recipient']) as ('passphrase' | 'recipient')[];

const cleanups: (() => Promise<unknown>)[] = [];
/** CPU ms so far of this process (the daemon runs in it) and of the store's process. */
const cpuNow = (s3: S3Standin) => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000 + s3.cpuMs();
};
const mib = (n: number) => `${(n / 1048576).toFixed(0)} MiB`;
const range = (xs: number[], f: (x: number) => string) => `${f(Math.min(...xs))} .. ${f(Math.max(...xs))}`;

interface Pair {
  svc: number;
  hand: number;
  /** CPU ms of this process (daemon, SDK) plus the store's, per copy: what the load cannot stretch. */
  svcCpu: number;
  handCpu: number;
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
      // A target's creation (or a daemon start with one) loads the SDK and derives the passphrase header
      // (src/offsite/warm.ts); the first copy comes after, as on a daemon that has been up a while.
      await waitFor(async () => isOffsiteWarm() || undefined, { timeoutMs: 120_000, intervalMs: 20, what: 'the offsite worker warm' });
      global.gc?.();
      const m0 = process.memoryUsage();
      const base = m0.rss;
      let peak = base;
      let atPeak = m0;
      const sampler = setInterval(() => {
        const m = process.memoryUsage();
        if (m.rss > peak) [peak, atPeak] = [m.rss, m];
      }, 20);
      const t0 = Date.now();
      const c0 = cpuNow(s3);
      await d.api('POST', `/api/backups/${b.id}/upload`);
      // The row is read from the daemon's database in this process: polling through the API would charge
      // the daemon ~10 requests a second of the bench's own making.
      const targetId = (target.body as { id: number }).id;
      const row = await waitFor(
        async () => {
          const r = uploadsOf(d.daemon.db, b.id).find((x) => x.targetId === targetId);
          if (r?.status === 'failed') throw new Error(r.error ?? 'failed');
          return r?.status === 'verified' ? { verified_by: r.verifiedBy } : undefined;
        },
        { timeoutMs: 1_800_000, intervalMs: 20, what: 'the copy verified' },
      );
      const took = Date.now() - t0;
      const cpu = cpuNow(s3) - c0;
      clearInterval(sampler);
      // ArrayBuffers (live buffers and those awaiting GC) before and at the RSS peak: what of the peak is
      // buffers and what is the allocator keeping freed memory.
      return { took, cpu, peak: peak - base, buffers: `${mib(m0.arrayBuffers)} -> ${mib(atPeak.arrayBuffers)}`, verifiedBy: String(row.verified_by) };
    };
    const byHand = async (round: number) => {
      const t1 = Date.now();
      const c1 = cpuNow(s3);
      await new Upload({
        client,
        params: { Bucket: s3.bucket, Key: `by-hand/${mode}-${round}.tar.gz`, Body: createReadStream(archive), ...(HAND_SHA256 ? { ChecksumAlgorithm: 'SHA256' as const } : {}) },
        partSize: PART_SIZE,
        queueSize: QUEUE,
      }).done();
      return { took: Date.now() - t1, cpu: cpuNow(s3) - c1 };
    };

    const pairs: Pair[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const svcFirst = round % 2 === 1;
      let hand = svcFirst ? undefined : await byHand(round);
      const svc = await svcCopy(round);
      hand ??= await byHand(round);
      pairs.push({ svc: svc.took, hand: hand.took, svcCpu: svc.cpu, handCpu: hand.cpu, peak: svc.peak, verifiedBy: svc.verifiedBy });
      log(
        `${mode} round ${round} (${svcFirst ? 'svc first' : 'by hand first'}): svc ${secs(svc.took)} (verified by ${svc.verifiedBy}), by hand ${secs(hand.took)}, ratio ${(svc.took / hand.took).toFixed(2)}x; ` +
          `CPU svc ${secs(svc.cpu)}, by hand ${secs(hand.cpu)}, ratio ${(svc.cpu / hand.cpu).toFixed(2)}x; daemon peak +${mib(svc.peak)} (ArrayBuffers ${svc.buffers}); ${await loadAvg()}`,
      );
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
      console.log(`  same archive by hand with lib-storage${HAND_SHA256 ? ' (+SHA256)' : '         '}: ${range(pairs.map((p) => p.hand), secs)}   [${pairs.map((p) => secs(p.hand)).join(', ')}]`);
      console.log(`  ratio per pair: ${range(pairs.map((p) => p.svc / p.hand), (x) => `${x.toFixed(2)}x`)}   [${pairs.map((p) => `${(p.svc / p.hand).toFixed(2)}x`).join(', ')}]`);
      console.log(`  CPU (this process + the store's) per copy: svc ${range(pairs.map((p) => p.svcCpu), secs)}, by hand ${range(pairs.map((p) => p.handCpu), secs)}; ratio per pair ${range(pairs.map((p) => p.svcCpu / p.handCpu), (x) => `${x.toFixed(2)}x`)}`);
      console.log(`  daemon peak RSS over the RSS before the copy: ${range(pairs.map((p) => p.peak), mib)}; verified by ${[...new Set(pairs.map((p) => p.verifiedBy))].join(', ')}`);
    }
    console.log(`${await loadAvg()}`);
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  }
});
