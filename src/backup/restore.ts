// Restore in place (API.md "Backups"), a persisted operation (`restores` row) that the `restore:<id>`
// reconciler drives through its phases: `unpacking` (unpack and check the archive into
// `<data>/.restore-<id>/archive`), `safety_backup`, `swapping` (other reconcilers paused, service containers
// stopped, the live services/ moved to `<staging>/previous-services` and the archive's into place, the rows
// replaced), `committed` (written in the same transaction as the rows) and `completed`, or `failed` with the
// previous state back. The row is the journal: a daemon that dies in `swapping` puts the old services/ back
// at its next start (the database was not committed) and runs the restore again from the start; one that
// died after `committed` only cleans up. Every step renames on one filesystem, so each move is atomic.
// On a Swarm whose services run on a labelled node, that node's services/ is swapped the same way, on its
// disk, first (`.restore-<id>-node` there): undone on a failure before the commit, and by the next run
// (before it swaps again, or as it gives up after the last allowed start) after a daemon died in
// `swapping`; its staging goes after the commit.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import type { Result } from '../controller/types.js';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import { LABELS, type DataNode, type NodeDisk, type Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { getBackup, type BackupRow } from '../store/backups.js';
import { activeRestores, getRestore, updateRestore, type RestoreRow } from '../store/backup-ops.js';
import { storeInstance } from '../store/instance.js';
import { rebaseServices, sealMissingGarageKeys } from '../store/services.js';
import { apps } from '../store/schema/index.js';
import { isNotNull, ne, or } from 'drizzle-orm';
import { ArchiveError, extractArchive, type ArchiveContents } from './extract-archive.js';
import type { Gate } from './quiesce.js';
import { KeyMismatchError, prepareSnapshot, replaceState } from './snapshot.js';
import { PENDING_DUMPS_DIR } from './pending-dumps.js';
import { planRemoteData, remoteDataFacts } from './held-elsewhere.js';

/** A restore that would need files on another node's disk (held-elsewhere.ts): refused, nothing changed. */
export class RemoteDataError extends Error {}

export interface RestoreDeps {
  db: Db;
  sealer: Sealer;
  runtime: Pick<Runtime, 'list' | 'stop' | 'remove' | 'dataNodeOf' | 'newServiceDataNode' | 'openNodeDisk'>;
  log: Logger;
  dataDir: string;
  backupDir: string;
  instance: string;
  gate: Gate;
  /** Inserts a `running` safety backup record. */
  newSafetyBackup(): BackupRow;
  /** Writes a record's archive (the backup reconciler's build); throws when it failed. */
  buildBackup(row: BackupRow): Promise<BackupRow>;
  /** Enqueues every key of every reconciler (manager.enqueueAll). */
  resync(): Promise<void>;
  /** A restore row was written (wakes requests that wait). */
  changed(): void;
}

/** Daemon starts that may find one restore unfinished before it is failed instead of run again. */
export const MAX_RESTORE_ATTEMPTS = 3;

export const stagingOf = (dataDir: string, id: number) => join(dataDir, `.restore-${id}`);

/** One step of `restore:<id>`: runs the restore to its end (the phases are written as it goes). */
export async function stepRestore(d: RestoreDeps, id: number): Promise<Result> {
  const row = getRestore(d.db, id);
  if (!row) return {};
  if (row.phase === 'committed') {
    // A daemon that died after the commit: the node's staging (its previous services/) and helper go too.
    await cleanUpOnNode(d, id);
    finish(d, row);
    return {};
  }
  if (row.phase !== 'pending') return {}; // settled, or a step of this process is running it
  if (row.attempts >= MAX_RESTORE_ATTEMPTS) {
    await giveUp(d, row);
    return {};
  }
  const set = (s: Parameters<typeof updateRestore>[2]) => {
    const r = updateRestore(d.db, id, s);
    d.changed();
    return r;
  };
  const staging = stagingOf(d.dataDir, id);
  const unpacked = join(staging, 'archive');
  try {
    const backup = getBackup(d.db, row.backupId);
    if (!backup || backup.status !== 'completed') throw new ArchiveError(`backup ${row.backupId} is gone or not completed; nothing was restored`);
    set({ phase: 'unpacking' });
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(unpacked, { recursive: true, mode: 0o700 });
    const contents = await extractArchive(join(d.backupDir, backup.filename), unpacked);
    prepareSnapshot(join(unpacked, 'svc.db'), d.db, d.sealer);
    // Where the restored services' data goes (the labelled node of a Swarm, else here), or why it cannot
    // be done: refused before the safety backup, so nothing changes.
    const where = planRemoteData(await remoteDataFacts(d.db, d.runtime, join(unpacked, 'svc.db'), contents));
    if ('refusal' in where) throw new RemoteDataError(where.refusal);

    // A safety backup an earlier attempt completed is still the state before this restore.
    const earlier = row.safetyBackupId ? getBackup(d.db, row.safetyBackupId) : undefined;
    let safetyId = earlier?.status === 'completed' ? earlier.id : undefined;
    if (!safetyId) {
      // Recorded before it is written: a daemon killed meanwhile finds it (completed, or failed as interrupted).
      const safety = d.newSafetyBackup();
      set({ phase: 'safety_backup', safetyBackupId: safety.id });
      safetyId = (await d.buildBackup(safety)).id;
    }
    set({ phase: 'swapping', safetyBackupId: safetyId });
    await swap(d, id, staging, contents, where.node);
    d.log.info('backup restore complete', { restore_id: id, backup_id: backup.id, filename: backup.filename, safety_backup_id: safetyId, restart_required: false });
    finish(d, getRestore(d.db, id)!);
  } catch (err) {
    const code =
      err instanceof ArchiveError ? 'invalid_archive' : err instanceof KeyMismatchError ? 'encryption_key_mismatch' : err instanceof RemoteDataError ? 'service_on_other_node' : 'restore_failed';
    const reason = err instanceof Error ? err.message : String(err);
    rmSync(staging, { recursive: true, force: true });
    set({ phase: 'failed', code, error: code === 'restore_failed' ? `restore failed and was rolled back: ${reason}` : reason });
    d.log.error('backup restore failed', { restore_id: id, backup_id: row.backupId, error: reason });
  }
  return {};
}

/**
 * Pauses the others, swaps services/ (here, or on the node the services will run on) and the rows, and
 * resumes; any failure before the commit is undone here.
 */
async function swap(d: RestoreDeps, id: number, staging: string, contents: ArchiveContents, node?: DataNode) {
  const unpacked = join(staging, 'archive');
  await d.gate.pause();
  let disk: NodeDisk | undefined;
  try {
    await removeServiceContainers(d);
    // Containers that mount a volume would keep the old directory (a bind mount follows the inode, not the
    // path): they go too, and the app reconciler recreates them from the restored state over the restored files.
    // A stack service's named volumes and bind mounts are in its sealed definition, not `apps.volumes`: every stack service app goes too.
    const withVolumes = new Set(d.db.select({ name: apps.name }).from(apps).where(or(ne(apps.volumes, '[]'), isNotNull(apps.stackId))).all().map((a) => a.name));
    for (const c of await d.runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: d.instance })) {
      const mounts = c.labels[LABELS.role] === 'job' || (c.labels[LABELS.role] === 'app' && withVolumes.has(c.labels[LABELS.app] ?? ''));
      if (!mounts) continue;
      await d.runtime.stop(c.id, 10);
      await d.runtime.remove(c.id);
    }
    if (node) {
      // The services' data on their node: that disk's services/ is swapped there, before anything here.
      disk = await d.runtime.openNodeDisk(node, d.dataDir, `restore-${id}`);
      try {
        await swapOnNode(disk, id, unpacked);
      } catch (err) {
        await undoOnNode(disk, id).catch((e: Error) => d.log.error('the previous services/ on a node could not be put back', { node: node.hostname, restore_id: id, error: e.message }));
        throw err;
      }
    }
    const live = join(d.dataDir, 'services');
    // An empty live services/ makes "previous-services exists" mean exactly "the live one was moved".
    mkdirSync(live, { recursive: true, mode: 0o700 });
    renameSync(live, join(staging, 'previous-services'));
    // volumes/ the same way; undoFiles puts it back together with services/.
    const liveVolumes = join(d.dataDir, 'volumes');
    mkdirSync(liveVolumes, { recursive: true, mode: 0o700 });
    renameSync(liveVolumes, join(staging, 'previous-volumes'));
    try {
      const incomingVolumes = join(unpacked, 'volumes');
      if (existsSync(incomingVolumes)) renameSync(incomingVolumes, liveVolumes);
      else mkdirSync(liveVolumes, { mode: 0o700 });
      // Owners and modes are the archive's (the unpacker gave them back), a volume's own directory too.
      const incoming = join(unpacked, 'services');
      // Data restored on another node is not kept here too: the manager has the empty directories it has
      // for any service held elsewhere.
      if (existsSync(incoming) && !node) renameSync(incoming, live);
      else mkdirSync(live, { mode: 0o700 });
      // A service whose data dir the archive lacks starts empty and gets its dump loaded once active.
      for (const name of contents.dumps.filter((n) => !contents.serviceDirs.includes(n))) {
        mkdirSync(join(live, name), { recursive: true, mode: 0o700 });
        mkdirSync(join(d.dataDir, PENDING_DUMPS_DIR), { recursive: true, mode: 0o700 });
        renameSync(join(unpacked, 'dumps', `${name}.sql`), join(d.dataDir, PENDING_DUMPS_DIR, `${name}.sql`));
      }
      replaceState(d.db, join(unpacked, 'svc.db'), () => {
        // The running identity stays (its containers carry it), and an archive from another host names its
        // data dirs and containers there; ours are under this data dir and instance.
        storeInstance(d.db, d.instance);
        rebaseServices(d.db, { dataDir: d.dataDir, instance: d.instance });
        sealMissingGarageKeys(d.db, d.sealer);
        updateRestore(d.db, id, { phase: 'committed' });
      });
      d.changed();
    } catch (err) {
      undoFiles(d.dataDir, staging);
      if (disk) await undoOnNode(disk, id).catch((e: Error) => d.log.error('the previous services/ on a node could not be put back', { node: node?.hostname, restore_id: id, error: e.message }));
      throw err;
    }
    // Committed: the node's previous services/ goes (as the staging dir here does in finish).
    if (disk) await disk.remove(nodeStaging(id)).catch((e: Error) => d.log.warn('a restore left its previous services/ on a node', { node: node?.hostname, path: nodeStaging(id), error: e.message }));
  } finally {
    await disk?.close().catch((e: Error) => d.log.warn('the restore helper on a node was not removed', { node: node?.hostname, error: e.message }));
    d.gate.resume();
    await d.resync();
  }
}

/** Stops and removes the service containers (Swarm services): what runs on a data directory being swapped. */
async function removeServiceContainers(d: RestoreDeps) {
  const ours = { [LABELS.managed]: 'true', [LABELS.instance]: d.instance, [LABELS.role]: 'service' };
  for (const c of await d.runtime.list(ours)) {
    await d.runtime.stop(c.id, 30);
    await d.runtime.remove(c.id);
  }
}

/**
 * A restore interrupted in `swapping` at its last allowed start (recoverRestores undid this disk and left it
 * `pending`): the node the services run on is put back too, with the services off it meanwhile (they may
 * have started on the half-swapped directory since the start), then the restore fails.
 */
async function giveUp(d: RestoreDeps, row: RestoreRow) {
  const node = await d.runtime.newServiceDataNode().catch(() => undefined);
  if (node) {
    await d.gate.pause();
    try {
      await removeServiceContainers(d);
      const disk = await d.runtime.openNodeDisk(node, d.dataDir, `restore-${row.id}`);
      try {
        await undoOnNode(disk, row.id);
      } finally {
        await disk.close();
      }
    } catch (err) {
      d.log.error('the previous services/ on a node could not be put back', { node: node.hostname, restore_id: row.id, error: (err as Error).message });
    } finally {
      d.gate.resume();
      await d.resync();
    }
  }
  updateRestore(d.db, row.id, { phase: 'failed', code: 'restore_failed', error: `restore failed and was rolled back: svc stopped during it ${row.attempts} times` });
  d.changed();
  d.log.error('an interrupted restore was rolled back and failed', { restore_id: row.id, attempts: row.attempts });
}

/** The staging dir of restore `id` on another node's disk (relative to the data directory). */
export const nodeStaging = (id: number) => `.restore-${id}-node`;

/**
 * On the node's disk: the archive's services/ unpacked into the staging dir, then the live services/ moved
 * aside into it and the new one into place (two renames). An earlier attempt of this restore (a daemon that
 * died midway) is undone first. Its undo (undoOnNode) puts the moved one back.
 */
async function swapOnNode(disk: NodeDisk, id: number, unpacked: string) {
  const stage = nodeStaging(id);
  await undoOnNode(disk, id);
  await disk.mkdir(stage);
  if (existsSync(join(unpacked, 'services'))) {
    // Not `portable`: the numeric owners and modes the unpacker gave back go along, and the node's engine
    // (PUT /containers/{id}/archive, as root) gives them to the files there.
    await disk.unpack(stage, createTar({ cwd: unpacked }, ['services']) as unknown as NodeJS.ReadableStream);
  }
  if (!(await disk.exists(`${stage}/services`))) await disk.mkdir(`${stage}/services`);
  await disk.mkdir('services');
  await disk.rename('services', `${stage}/previous-services`);
  await disk.rename(`${stage}/services`, 'services');
}

/** Best effort, after a commit: the staging dir and the helper on the node the services go to, if any. */
async function cleanUpOnNode(d: RestoreDeps, id: number) {
  const node = await d.runtime.newServiceDataNode().catch(() => undefined);
  if (!node) return;
  try {
    const disk = await d.runtime.openNodeDisk(node, d.dataDir, `restore-${id}`);
    try {
      await disk.remove(nodeStaging(id));
    } finally {
      await disk.close();
    }
  } catch (err) {
    d.log.warn('a restore left its previous services/ on a node', { node: node.hostname, path: nodeStaging(id), error: (err as Error).message });
  }
}

/** Puts the node's previous services/ back when it was moved aside, and removes the staging dir. */
async function undoOnNode(disk: NodeDisk, id: number) {
  const stage = nodeStaging(id);
  if (await disk.exists(`${stage}/previous-services`)) {
    await disk.remove('services');
    await disk.rename(`${stage}/previous-services`, 'services');
  }
  await disk.remove(stage);
}

/** After the commit: the staging dir (with the previous services/) goes, and the operation completes. */
function finish(d: RestoreDeps, row: RestoreRow) {
  rmSync(stagingOf(d.dataDir, row.id), { recursive: true, force: true });
  updateRestore(d.db, row.id, { phase: 'completed' });
  d.changed();
}

/** Puts the services/ that was live back (the database was not committed). */
function undoFiles(dataDir: string, staging: string) {
  const previous = join(staging, 'previous-services');
  if (!existsSync(previous)) return; // never moved: nothing to undo
  const live = join(dataDir, 'services');
  rmSync(live, { recursive: true, force: true });
  renameSync(previous, live);
  const previousVolumes = join(staging, 'previous-volumes');
  if (existsSync(previousVolumes)) {
    rmSync(join(dataDir, 'volumes'), { recursive: true, force: true });
    renameSync(previousVolumes, join(dataDir, 'volumes'));
  }
  rmSync(join(dataDir, PENDING_DUMPS_DIR), { recursive: true, force: true });
}

/**
 * At start, before any reconcile: a restore this daemon's predecessor left unfinished is undone (swapping)
 * and made `pending` again so the restore reconciler runs it from the start, or completed (committed). One
 * that kept dying is failed. Leftover staging dirs go.
 */
export function recoverRestores(db: Db, dataDir: string, log: Logger): void {
  recoverLegacyJournal(dataDir, log);
  for (const row of activeRestores(db)) {
    const staging = stagingOf(dataDir, row.id);
    if (row.phase === 'committed') continue; // finished by its reconcile: only cleanup is left
    if (row.phase === 'swapping') undoFiles(dataDir, staging);
    rmSync(staging, { recursive: true, force: true });
    const attempts = row.attempts + 1;
    if (row.phase === 'pending') continue; // never started
    if (attempts >= MAX_RESTORE_ATTEMPTS && row.phase === 'swapping') {
      // Another node's disk may be half-swapped too: the restore's step puts it back, then fails (giveUp).
      updateRestore(db, row.id, { phase: 'pending', attempts });
      log.warn('an interrupted restore was rolled back; it fails once its node is rolled back too', { restore_id: row.id, attempts });
    } else if (attempts >= MAX_RESTORE_ATTEMPTS) {
      updateRestore(db, row.id, { phase: 'failed', attempts, code: 'restore_failed', error: `restore failed and was rolled back: svc stopped during it ${attempts} times` });
      log.error('an interrupted restore was rolled back and failed', { restore_id: row.id, phase: row.phase, attempts });
    } else {
      updateRestore(db, row.id, { phase: 'pending', attempts });
      log.warn('an interrupted restore was rolled back; it runs again', { restore_id: row.id, phase: row.phase, attempts });
    }
  }
  const keep = new Set(activeRestores(db).filter((r) => r.phase === 'committed').map((r) => `.restore-${r.id}`));
  for (const f of existsSync(dataDir) ? readdirSync(dataDir) : []) {
    if (f.startsWith('.restore-') && !keep.has(f)) rmSync(join(dataDir, f), { recursive: true, force: true });
  }
}

/** The journal file of svc versions whose restore was an in-memory promise: undone the same way. */
function recoverLegacyJournal(dataDir: string, log: Logger) {
  const path = join(dataDir, '.restore-journal.json');
  if (!existsSync(path)) return;
  const j = JSON.parse(readFileSync(path, 'utf8')) as { staging: string; hadServices: boolean; phase: string };
  if (j.phase === 'files' && (!j.hadServices || existsSync(join(j.staging, 'previous-services')))) {
    if (j.hadServices) undoFiles(dataDir, j.staging);
    else rmSync(join(dataDir, 'services'), { recursive: true, force: true });
    log.warn('an interrupted restore was rolled back', { staging: j.staging });
  }
  rmSync(path, { force: true });
}
