// Restore in place (API.md "Backups"), run as the backup reconciler's step. Order: unpack and check the
// archive into a staging dir on the data dir's filesystem; take the safety backup; pause the other
// reconcilers; stop and remove the service containers; move the live services/ aside and the archive's
// into place (renames, so each is atomic); replace the database rows in one transaction; resume and
// resync everything, which recreates services and apps as the archive describes. Any failure before the
// commit puts the old services/ back and leaves the database untouched; a crash in between is undone at
// the next start from the journal (`recoverRestore`).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import { LABELS, type Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import type { BackupRow } from '../store/backups.js';
import { storeInstance } from '../store/instance.js';
import { rebaseServices } from '../store/services.js';
import { extractArchive } from './extract-archive.js';
import type { Gate } from './quiesce.js';
import { prepareSnapshot, replaceState } from './snapshot.js';
import { PENDING_DUMPS_DIR } from './pending-dumps.js';

export interface RestoreDeps {
  db: Db;
  sealer: Sealer;
  runtime: Pick<Runtime, 'list' | 'stop' | 'remove'>;
  log: Logger;
  dataDir: string;
  backupDir: string;
  instance: string;
  gate: Gate;
  /** Creates and writes the safety backup; throws when it failed. */
  safetyBackup(): Promise<BackupRow>;
  /** Enqueues every key of every reconciler (manager.enqueueAll). */
  resync(): Promise<void>;
}

const JOURNAL = '.restore-journal.json';

interface Journal {
  staging: string;
  /** True when data/services existed before (it is then under staging/previous-services). */
  hadServices: boolean;
  phase: 'files' | 'committed';
}

const writeJournal = (dataDir: string, j: Journal) => writeFileSync(join(dataDir, JOURNAL), JSON.stringify(j), { mode: 0o600, flush: true });

/** Restores `row`'s archive into the running daemon. Resolves with the safety backup's record. */
export async function restoreOnline(d: RestoreDeps, row: BackupRow): Promise<{ safety: BackupRow }> {
  mkdirSync(d.dataDir, { recursive: true });
  const staging = await mkdtemp(join(d.dataDir, '.restore-'));
  const unpacked = join(staging, 'archive');
  mkdirSync(unpacked, { mode: 0o700 });
  let paused = false;
  try {
    const contents = await extractArchive(join(d.backupDir, row.filename), unpacked);
    prepareSnapshot(join(unpacked, 'svc.db'), d.db, d.sealer);
    const safety = await d.safetyBackup();

    await d.gate.pause();
    paused = true;
    const ours = { [LABELS.managed]: 'true', [LABELS.instance]: d.instance, [LABELS.role]: 'service' };
    for (const c of await d.runtime.list(ours)) {
      await d.runtime.stop(c.id, 30);
      await d.runtime.remove(c.id);
    }

    const live = join(d.dataDir, 'services');
    const journal: Journal = { staging, hadServices: existsSync(live), phase: 'files' };
    writeJournal(d.dataDir, journal);
    if (journal.hadServices) renameSync(live, join(staging, 'previous-services'));
    try {
      const incoming = join(unpacked, 'services');
      if (existsSync(incoming)) renameSync(incoming, live);
      else mkdirSync(live, { mode: 0o700 });
      // A service whose data dir the archive lacks starts empty and gets its dump loaded once active.
      for (const name of contents.dumps.filter((n) => !contents.serviceDirs.includes(n))) {
        mkdirSync(join(live, name), { recursive: true, mode: 0o700 });
        mkdirSync(join(d.dataDir, PENDING_DUMPS_DIR), { recursive: true, mode: 0o700 });
        renameSync(join(unpacked, 'dumps', `${name}.sql`), join(d.dataDir, PENDING_DUMPS_DIR, `${name}.sql`));
      }
      const { rows } = replaceState(d.db, join(unpacked, 'svc.db'));
      // The running identity stays (its containers carry it), and an archive from another host names its
      // data dirs and containers there; ours are under this data dir and instance.
      storeInstance(d.db, d.instance);
      rebaseServices(d.db, { dataDir: d.dataDir, instance: d.instance });
      writeJournal(d.dataDir, { ...journal, phase: 'committed' });
      d.log.info('backup restore complete', { backup_id: row.id, filename: row.filename, safety_backup_id: safety.id, rows, restart_required: false });
    } catch (err) {
      undoFiles(d.dataDir, journal);
      throw err;
    }
    return { safety };
  } finally {
    if (paused) {
      d.gate.resume();
      await d.resync();
    }
    rmSync(join(d.dataDir, JOURNAL), { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}

/** Puts the services/ that was live back (the database was not committed). */
function undoFiles(dataDir: string, j: Journal) {
  const live = join(dataDir, 'services');
  const previous = join(j.staging, 'previous-services');
  if (j.hadServices && !existsSync(previous)) return; // never moved: nothing to undo
  rmSync(live, { recursive: true, force: true });
  if (j.hadServices) renameSync(previous, live);
  rmSync(join(dataDir, PENDING_DUMPS_DIR), { recursive: true, force: true });
}

/** At start: undoes a restore a crash interrupted before its commit, and removes its staging dir. */
export function recoverRestore(dataDir: string, log: Logger): void {
  const path = join(dataDir, JOURNAL);
  if (existsSync(path)) {
    const j = JSON.parse(readFileSync(path, 'utf8')) as Journal;
    if (j.phase === 'files') {
      undoFiles(dataDir, j);
      log.warn('an interrupted restore was rolled back', { staging: j.staging });
    }
    rmSync(path, { force: true });
  }
  for (const f of existsSync(dataDir) ? readdirSync(dataDir) : []) {
    if (f.startsWith('.restore-')) rmSync(join(dataDir, f), { recursive: true, force: true });
  }
}
