// THE COMMANDS of per-service backups and restores (issue 33 section 3, decision 0052): take a backup of
// one service, drop one, set a service's schedule and retention, restore one into the same service (a
// safety backup first) or into a new service (a copy). Each checks, writes its row and enqueues its key;
// the dump, the copy and the load are the service-backup reconciler's (src/reconcilers/service-backup/).
import { z } from 'zod';
import { backupOpsOf } from '../catalog/service-backup.js';
import { isLaterVersion } from '../catalog/types.js';
import { keyOf } from '../controller/types.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { Progress } from '../backup/progress.js';
import { tx } from '../store/db.js';
import { serviceBackupPolicies, nowIso } from '../store/schema/index.js';
import {
  deleteServiceBackupRecord, getServiceBackup, newServiceBackup, getServiceRestore, insertServiceRestore, runningRestoreOf, runningServiceBackupOf, runningServiceRestores,
  type ServiceBackupRow, type ServiceRestoreRow,
} from '../store/service-backups.js';
import { openUpgradeOf, addServiceEvent } from '../store/service-upgrades.js';
import { getService } from '../store/services.js';
import { getBackup } from '../store/backups.js';
import type { ServiceView } from '../store/service-view.js';
import type { CommandCtx, Origin } from './context.js';
import { parseInput } from './parse.js';
import { createService } from './services.js';

export const backupPolicySchema = z
  .object({
    /** Minutes between scheduled backups of this service; 0 turns them off. */
    interval_minutes: z.number().int().min(0).max(525_600).optional(),
    /** Completed backups kept (newest first), here and at every backup target. */
    retain: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

export const restoreServiceSchema = z
  .object({
    /** One of the service's backups... */
    backup_id: z.number().int().positive().optional(),
    /** ...or a full-state backup, whose dump of this service is loaded (postgres, mysql; into the service only). */
    full_backup_id: z.number().int().positive().optional(),
    /** Restore into a new service of this name (a copy) instead of into this one. */
    into: z.object({ name: z.string() }).strict().optional(),
  })
  .strict();

function serviceOf(ctx: Pick<CommandCtx, 'db'>, id: number): ServiceView {
  const row = getService(ctx.db, id);
  if (!row || row.deletedAt) throw notFound('service');
  return row;
}

function assertBackups(row: ServiceView) {
  if (!backupOpsOf(row.type)) throw conflict(`${row.type} services have no per-service backups yet; their data is in the full backups`);
}

function assertIdle(ctx: Pick<CommandCtx, 'db'>, row: ServiceView, what: string) {
  const r = runningRestoreOf(ctx.db, row.id);
  if (r) throw conflict(`restore ${r.id} into service ${row.name} is running; ${what} when it has finished`, { restore_id: r.id });
  const b = runningServiceBackupOf(ctx.db, row.id);
  if (b) throw conflict(`backup ${b.id} of service ${row.name} is being taken; ${what} when it has finished`, { backup_id: b.id });
}

function assertServing(row: ServiceView, what: string) {
  if (!row.desiredRunning || row.status !== 'active') throw conflict(`service ${row.name} is ${row.desiredRunning ? row.status : 'stopped'}; ${what} needs it active and running`);
}

/** A backup of one service now: a `running` record and its key. 409 while one of it runs or it is restored. */
export function backupService(ctx: Pick<CommandCtx, 'db' | 'enqueue' | 'log'>, id: number, origin: Origin): ServiceBackupRow {
  const row = serviceOf(ctx, id);
  assertBackups(row);
  assertServing(row, 'a backup');
  const b = tx(ctx.db, () => {
    assertIdle(ctx, row, 'back it up');
    return newServiceBackup(ctx.db, row, 'manual');
  });
  ctx.enqueue(keyOf('service-backup', String(b.id)));
  ctx.log.info('service backup requested', { service: row.name, id: b.id, origin });
  return b;
}

/** A backup of the service `serviceId` (404 for another service's). */
export function serviceBackupOf(ctx: Pick<CommandCtx, 'db'>, serviceId: number, backupId: number): ServiceBackupRow {
  const b = getServiceBackup(ctx.db, backupId);
  if (!b || b.serviceId !== serviceId) throw notFound('backup');
  return b;
}

/** Drops a finished backup's record; the reconciler's `files` pass removes its file. */
export function deleteServiceBackup(ctx: Pick<CommandCtx, 'db' | 'enqueue' | 'log'>, serviceId: number, backupId: number, origin: Origin): ServiceBackupRow {
  const b = serviceBackupOf(ctx, serviceId, backupId);
  if (b.status === 'running') throw conflict(`backup ${b.id} is still being taken; delete it when it has finished`);
  const user = runningServiceRestores(ctx.db).find((r) => r.backupId === b.id || r.safetyBackupId === b.id);
  if (user) throw conflict(`backup ${b.id} is used by restore ${user.id}, which is running`);
  const up = openUpgradeOf(ctx.db, serviceId);
  if (up && b.upgradeId === up.id) throw conflict(`backup ${b.id} is the one taken before upgrade ${up.id}, which is still open; confirm or revert it first`);
  deleteServiceBackupRecord(ctx.db, b.id);
  ctx.enqueue(keyOf('service-backup', 'files'));
  ctx.log.info('service backup deleted', { service: b.serviceName, id: b.id, origin });
  return b;
}

/** Sets the service's schedule and retention (`backup: {interval_minutes, retain}`); unset fields keep their value. */
export function setBackupPolicy(ctx: Pick<CommandCtx, 'db' | 'enqueue'>, id: number, raw: unknown): { interval_minutes: number; retain: number } {
  const input = parseInput(backupPolicySchema, raw);
  const row = serviceOf(ctx, id);
  if ((input.interval_minutes ?? 0) > 0) assertBackups(row);
  const cur = ctx.db.select().from(serviceBackupPolicies).all().find((p) => p.serviceId === row.id);
  const next = { intervalMinutes: input.interval_minutes ?? cur?.intervalMinutes ?? 0, retain: input.retain ?? cur?.retain ?? 7 };
  ctx.db
    .insert(serviceBackupPolicies)
    .values({ serviceId: row.id, ...next })
    .onConflictDoUpdate({ target: serviceBackupPolicies.serviceId, set: { ...next, updatedAt: nowIso() } })
    .run();
  ctx.enqueue(keyOf('service-backup', 'schedule'));
  ctx.enqueue(keyOf('service-backup', 'files'));
  return { interval_minutes: next.intervalMinutes, retain: next.retain };
}

/**
 * Restores one of a service's backups into the service (a safety backup of it first) or, with `into`,
 * into a new service of that name and the same type and version (a copy). No other app, service or
 * setting is touched. 409 while the service is upgraded, restored or backed up, or for a backup of a
 * later version than the service runs.
 */
export function restoreService(ctx: CommandCtx, id: number, raw: unknown, origin: Origin): { restore: ServiceRestoreRow; service: ServiceView } {
  const input = parseInput(restoreServiceSchema, raw);
  if ((input.backup_id === undefined) === (input.full_backup_id === undefined)) throw invalid('give one of backup_id (a backup of this service) and full_backup_id (a full-state backup)');
  const source = serviceOf(ctx, id);
  if (input.full_backup_id !== undefined) return restoreFromFull(ctx, source, input.full_backup_id, input.into, origin);
  const b = serviceBackupOf(ctx, source.id, input.backup_id!);
  if (b.status !== 'completed') throw conflict(`backup ${b.id} is ${b.status}; only a completed backup can be restored`);
  if (!input.into) {
    assertServing(source, 'a restore');
    const up = openUpgradeOf(ctx.db, source.id);
    if (up?.status === 'running') throw conflict(`service ${source.name} is being upgraded (step ${up.step}); restore when the upgrade has ended`, { upgrade_id: up.id });
    if (b.version !== source.version && isLaterVersion(source.type, source.version, b.version)) {
      throw conflict(`backup ${b.id} was taken at ${source.type} ${b.version}; service ${source.name} runs ${source.version}, which cannot load it (restore it into a new service instead)`);
    }
    const r = tx(ctx.db, () => {
      assertIdle(ctx, source, 'restore it');
      const r = insertServiceRestore(ctx.db, { backupId: b.id, serviceId: source.id, serviceName: source.name, intoNew: false });
      addServiceEvent(ctx.db, source.id, 'restore_requested', `restore ${r.id} of backup ${b.id} (${b.createdAt}) asked for (${origin}); a safety backup is taken first`);
      return r;
    });
    ctx.enqueue(keyOf('service-backup', `restore-${r.id}`));
    ctx.log.info('service restore requested', { service: source.name, backup_id: b.id, restore_id: r.id, origin });
    return { restore: r, service: source };
  }
  // A copy: a new service of the backup's type at the version the backup was taken at.
  const copy = createService(ctx, { name: input.into.name, type: b.serviceType, version: b.version }, origin);
  const r = tx(ctx.db, () => {
    const r = insertServiceRestore(ctx.db, { backupId: b.id, serviceId: copy.id, serviceName: copy.name, intoNew: true });
    addServiceEvent(ctx.db, copy.id, 'restore_requested', `created as a copy of ${source.name}: restore ${r.id} loads its backup ${b.id} (${b.createdAt}) once the service is active`);
    return r;
  });
  ctx.enqueue(keyOf('service-backup', `restore-${r.id}`));
  ctx.log.info('service restore into a new service requested', { service: source.name, into: copy.name, backup_id: b.id, restore_id: r.id, origin });
  return { restore: r, service: copy };
}

/**
 * A restore from a full-state backup's dump of the service: a service backup record taken from the archive
 * (trigger `full_backup`, so it is listed and kept like the others) and a restore of it into the service.
 * Into the service only: such a dump carries the passwords of its time, which a copy must not get.
 */
function restoreFromFull(ctx: CommandCtx, source: ServiceView, fullBackupId: number, into: { name: string } | undefined, origin: Origin) {
  if (into) throw conflict("a full backup's dump loads into its own service only (it carries that service's passwords); restore it, then restore that service's backup into a new service");
  const full = getBackup(ctx.db, fullBackupId);
  if (!full) throw notFound('backup');
  if (full.status !== 'completed') throw conflict(`backup ${full.id} is ${full.status}; only a completed backup can be restored`);
  if (source.type !== 'postgres' && source.type !== 'mysql') throw conflict(`a full backup holds a dump of postgres and mysql services only; a ${source.type} service's data is restored with the whole backup`);
  assertServing(source, 'a restore');
  const up = openUpgradeOf(ctx.db, source.id);
  if (up?.status === 'running') throw conflict(`service ${source.name} is being upgraded (step ${up.step}); restore when the upgrade has ended`, { upgrade_id: up.id });
  const { b, r } = tx(ctx.db, () => {
    assertIdle(ctx, source, 'restore it');
    const b = newServiceBackup(ctx.db, source, 'full_backup', undefined, full.id);
    const r = insertServiceRestore(ctx.db, { backupId: b.id, serviceId: source.id, serviceName: source.name, intoNew: false });
    addServiceEvent(ctx.db, source.id, 'restore_requested', `restore ${r.id} of ${source.name}'s dump in full backup ${full.id} (${full.filename}) asked for (${origin}); a safety backup is taken first`);
    return { b, r };
  });
  ctx.enqueue(keyOf('service-backup', String(b.id)));
  ctx.enqueue(keyOf('service-backup', `restore-${r.id}`));
  ctx.log.info('service restore from a full backup requested', { service: source.name, full_backup_id: full.id, restore_id: r.id, origin });
  return { restore: r, service: source };
}

export function getServiceRestoreOp(ctx: Pick<CommandCtx, 'db'>, id: number): ServiceRestoreRow {
  const r = getServiceRestore(ctx.db, id);
  if (!r) throw notFound('restore');
  return r;
}

/** Waits (bounded by `signal`) for a backup or restore row to settle; without `progress`, one look. */
export function settled<T>(progress: Progress | undefined, check: () => T | undefined, signal?: AbortSignal): Promise<T | undefined> {
  return progress ? progress.until(check, signal) : Promise.resolve(check());
}
export const settledServiceBackup = (ctx: Pick<CommandCtx, 'db'>, progress: Progress | undefined, id: number, signal?: AbortSignal) =>
  settled(progress, () => {
    const b = getServiceBackup(ctx.db, id);
    return b && b.status !== 'running' ? b : undefined;
  }, signal);
export const settledServiceRestore = (ctx: Pick<CommandCtx, 'db'>, progress: Progress | undefined, id: number, signal?: AbortSignal) =>
  settled(progress, () => {
    const r = getServiceRestore(ctx.db, id);
    return r && r.status !== 'running' ? r : undefined;
  }, signal);

export const invalidBackupId = () => invalid('backup_id: a number');
