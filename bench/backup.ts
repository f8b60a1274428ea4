// Backup benchmark: a Postgres service filled to --mb MiB and --apps apps; then (1) `docker exec ...
// pg_dumpall | gzip` by hand, time and size; (2) a svc backup (POST /api/backups until completed), time
// and archive size (the POST answers the completed record); (3) the longest API write stall (PUT of an app)
// under 4 concurrent writers, without and during a backup; (4) a restore of that backup, time to the 200 of
// `?wait=true` (the restore operation completed). The daemon runs in this process
// (test/support/daemon.ts), so client and server share one event loop: stalls are an upper bound.
//
//   npm run bench:backup -- [--mb 200] [--apps 1000]
//
// Bounded: every wait has a deadline; at the end (even on error) the daemon, its containers and dirs go.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { SERVICE_TEST_IMAGES } from '../test/support/service-images.js';
import { client } from '../test/support/backup-sql.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, ms, numFlag, runMain, secs } from './common.js';
import { createApp } from '../test/support/commands.js';

const MB = numFlag('mb', 200, 1, 2000);
const APPS = numFlag('apps', 1000, 0, 5000);

async function handDump(container: string, password: string, out: string): Promise<number> {
  const t0 = Date.now();
  const dump = spawn('docker', ['exec', '-e', `PGPASSWORD=${password}`, container, 'pg_dumpall', '-U', 'svc'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const gz = spawn('gzip', ['-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
  dump.stdout.pipe(gz.stdin);
  gz.stdout.pipe(createWriteStream(out));
  await Promise.all([once(dump, 'exit'), once(gz, 'exit')]);
  return Date.now() - t0;
}

async function backup(d: TestDaemon): Promise<{ ms: number; size: number; id: number }> {
  const t0 = Date.now();
  const res = await d.api('POST', '/api/backups');
  if (res.status >= 400) throw new Error(res.body.error);
  const row = await waitFor(async () => {
    const r = (await d.api('GET', `/api/backups/${res.body.id}`)).body;
    if (r.status === 'failed') throw new Error(r.error);
    return r.status === 'completed' ? r : undefined;
  }, { timeoutMs: 1_800_000, intervalMs: 100 });
  return { ms: Date.now() - t0, size: row.size_bytes, id: row.id };
}

/** 4 writers PUT apps in a loop until `stop` resolves; returns the longest request and the count. */
async function writeLoad(d: TestDaemon, ids: number[], until: Promise<unknown>) {
  let done = false;
  void until.finally(() => (done = true));
  let worst = 0;
  let n = 0;
  await Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      for (let i = w; !done; i += 4) {
        const t = performance.now();
        await d.api('PUT', `/api/apps/${ids[i % ids.length]}`, { branch: `b${i % 7}` });
        worst = Math.max(worst, performance.now() - t);
        n++;
      }
    }),
  );
  return { worst, n };
}

async function main() {
  log(await loadAvg());
  const scratch = await mkdtemp(join(tmpdir(), 'svc-bench-backup-'));
  const d = await startTestDaemon('bkbench', { SVC_IMAGE_POSTGRES: SERVICE_TEST_IMAGES.postgres });
  try {
    const created = await d.api('POST', '/api/services', { name: 'bkb-pg', type: 'postgres' });
    await waitFor(async () => (await d.api('GET', `/api/services/${created.body.id}`)).body.status === 'active', { timeoutMs: 180_000 });
    const pg = client(d, created.body.id, 'bkb-pg', 'postgres');
    const rows = Math.round((MB * 1024 * 1024) / 300);
    log(`filling postgres with ${rows} rows (~${MB} MiB)`);
    await pg.run('CREATE TABLE fill (id int PRIMARY KEY, body text)');
    for (let from = 1; from <= rows; from += 200_000) {
      await pg.run(`INSERT INTO fill SELECT g, repeat(md5(g::text), 8) FROM generate_series(${from}, ${Math.min(rows, from + 199_999)}) g`);
    }
    log(`database size ${await pg.run("SELECT pg_size_pretty(pg_database_size('app'))")}`);
    const ids: number[] = [];
    for (let i = 0; i < APPS; i++) ids.push(createApp(d.daemon.db, () => {}, { name: `bkb-app-${i}`, imageRef: 'svc-test/web:v1', accessMode: 'port', fallbackPort: 30000 + i }, 'rest').id);
    log(`${APPS} apps created`);

    const creds = (await d.api('GET', `/api/services/${created.body.id}/credentials`)).body;
    const handFile = join(scratch, 'hand.sql.gz');
    const handMs = await handDump(`${d.instance}-svc-bkb-pg`, creds.password, handFile);
    const handSize = (await stat(handFile)).size;
    log(`pg_dumpall | gzip by hand: ${secs(handMs)}, ${(handSize / 1e6).toFixed(1)} MB`);

    const first = await backup(d);
    log(`svc backup: ${secs(first.ms)}, ${(first.size / 1e6).toFixed(1)} MB (${(first.ms / handMs).toFixed(2)}x the hand run's time)`);

    const idle = await writeLoad(d, ids, new Promise((r) => setTimeout(r, 5_000)));
    const during = await writeLoad(d, ids, backup(d));
    log(`API writes: longest ${ms(idle.worst)} without a backup (${idle.n} writes), ${ms(during.worst)} during one (${during.n} writes)`);

    const t0 = Date.now();
    // A restore is an operation (202 + GET /api/restores/{id}); ?wait=true answers its outcome (200) when it ends.
    const res = await d.api('POST', `/api/backups/${first.id}/restore?wait=true`);
    log(`restore: ${res.status} in ${secs(Date.now() - t0)}`);
    console.log(JSON.stringify({ mb: MB, apps: APPS, hand_ms: handMs, hand_bytes: handSize, backup_ms: first.ms, backup_bytes: first.size, write_stall_idle_ms: Math.round(idle.worst), write_stall_backup_ms: Math.round(during.worst), restore_ms: Date.now() - t0 }));
  } finally {
    await d.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

runMain(main);
