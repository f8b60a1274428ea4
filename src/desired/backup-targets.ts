// THE COMMANDS of backup targets (issue 21 section 1): the S3-compatible stores every completed backup is
// copied to. Credentials are sealed before they reach a row (crypto.ts) and never leave through a command.
// The "test" action, the listing of a bucket's copies and their import are here too, so the API, the UI
// and the CLI (through the API) share one path and one set of rules.
import { z } from 'zod';
import { keyOf } from '../controller/types.js';
import { conflict, DomainError, notFound, unprocessable } from '../errors.js';
import { getBackup } from '../store/backups.js';
import { getTarget, insertUploads, listTargets, openCredentials, targetByName, updateUpload, uploadsOf, type TargetRow } from '../store/offsite.js';
import { backupTargets, nowIso } from '../store/schema/index.js';
import { eq } from 'drizzle-orm';
import { insertRemoteImport, type ImportRow } from '../store/backup-ops.js';
import { objectKey, s3ClientFor, storeReason, type TargetConfig } from '../offsite/s3.js';
import { probeTarget, type ProbeResult } from '../offsite/probe.js';
import { listRemote, type RemoteCopy } from '../offsite/remote.js';
import { REMOTE_NAME } from '../offsite/s3.js';
import type { CommandCtx, Origin } from './context.js';
import { nameSchema } from './fields.js';
import { parseInput } from './parse.js';
import type { BackupContext } from './backups.js';

export type TargetCtx = Pick<CommandCtx, 'db' | 'sealer' | 'log' | 'enqueue' | 'config'>;

const endpointSchema = z
  .string()
  .max(300)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && (u.pathname === '/' || u.pathname === '') && !u.search && !u.hash;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL with no path, query or credentials, e.g. https://s3.example.com')
  .transform((v) => v.replace(/\/+$/, ''));

const fieldsSchema = {
  endpoint: z.union([endpointSchema, z.literal(''), z.null()]).optional(),
  region: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be a region name such as us-east-1 or garage'),
  bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 of a-z, 0-9, . and -)'),
  prefix: z
    .string()
    .max(200)
    .regex(/^([A-Za-z0-9!_.*'()-]+\/)*$/, "must be empty or path segments each ending in '/', e.g. svc/prod/"),
  access_key: z.string().min(1).max(256).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  secret_key: z.string().min(1).max(256).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
};

export const targetCreateSchema = z.object({
  name: nameSchema,
  ...fieldsSchema,
  region: fieldsSchema.region.default('us-east-1'),
  prefix: fieldsSchema.prefix.default(''),
}).strict();

export const targetUpdateSchema = z.object({
  endpoint: fieldsSchema.endpoint,
  region: fieldsSchema.region.optional(),
  bucket: fieldsSchema.bucket.optional(),
  prefix: fieldsSchema.prefix.optional(),
  access_key: fieldsSchema.access_key.optional(),
  secret_key: fieldsSchema.secret_key.optional(),
}).strict();

const emptyToNull = (v: string | null | undefined) => (v ? v : null);

export function createTarget(ctx: TargetCtx, raw: unknown, origin: Origin): TargetRow {
  const v = parseInput(targetCreateSchema, raw);
  if (targetByName(ctx.db, v.name)) throw conflict(`a backup target named ${v.name} exists`);
  const row = ctx.db
    .insert(backupTargets)
    .values({
      name: v.name,
      endpoint: emptyToNull(v.endpoint),
      region: v.region,
      bucket: v.bucket,
      prefix: v.prefix,
      credentials: ctx.sealer.sealJson({ access_key: v.access_key, secret_key: v.secret_key }),
    })
    .returning()
    .get();
  ctx.log.info('backup target created', { target: row.name, bucket: row.bucket, origin });
  ctx.enqueue(keyOf('offsite', 'warm')); // the first copy should not load the SDK (reconcilers/offsite)
  return row;
}

export function requireTarget(ctx: Pick<TargetCtx, 'db'>, id: number): TargetRow {
  const row = getTarget(ctx.db, id);
  if (!row) throw notFound('backup target');
  return row;
}

/** Changes what is given; the keys are replaced only when sent (a form can leave the secret blank). */
export function updateTarget(ctx: TargetCtx, id: number, raw: unknown, origin: Origin): TargetRow {
  const v = parseInput(targetUpdateSchema, raw);
  const row = requireTarget(ctx, id);
  const creds = openCredentials(ctx.sealer, row);
  const next = ctx.db
    .update(backupTargets)
    .set({
      endpoint: v.endpoint === undefined ? row.endpoint : emptyToNull(v.endpoint),
      region: v.region ?? row.region,
      bucket: v.bucket ?? row.bucket,
      prefix: v.prefix ?? row.prefix,
      credentials: ctx.sealer.sealJson({ access_key: v.access_key ?? creds.access_key, secret_key: v.secret_key ?? creds.secret_key }),
      updatedAt: nowIso(),
    })
    .where(eq(backupTargets.id, id))
    .returning()
    .get()!;
  ctx.log.info('backup target updated', { target: row.name, origin });
  return next;
}

/** Forgets the target and its upload rows; the copies already in the bucket stay (they are the operator's). */
export function deleteTarget(ctx: TargetCtx, id: number, origin: Origin): void {
  const row = requireTarget(ctx, id);
  ctx.db.delete(backupTargets).where(eq(backupTargets.id, id)).run();
  ctx.log.info('backup target deleted', { target: row.name, origin });
}

export function targetConfig(ctx: Pick<TargetCtx, 'sealer'>, row: TargetRow): TargetConfig {
  const c = openCredentials(ctx.sealer, row);
  return { name: row.name, endpoint: row.endpoint, region: row.region, bucket: row.bucket, prefix: row.prefix, accessKey: c.access_key, secretKey: c.secret_key };
}

/** Writes, reads back and deletes a small object; the store's own error when a step fails. */
export async function testTarget(ctx: TargetCtx, id: number, signal?: AbortSignal): Promise<ProbeResult> {
  const row = requireTarget(ctx, id);
  const client = s3ClientFor(targetConfig(ctx, row));
  try {
    const r = await probeTarget(client, row.bucket, row.prefix, signal);
    ctx.log.info('backup target tested', { target: row.name, ok: r.ok, ...(r.ok ? {} : { step: r.step, error: r.error }) });
    return r;
  } finally {
    client.destroy();
  }
}

/** The copies in the target's bucket; a store that fails is 503 `target_unreachable` with its reason. */
export async function remoteCopies(ctx: TargetCtx, id: number, signal?: AbortSignal): Promise<RemoteCopy[]> {
  const row = requireTarget(ctx, id);
  const client = s3ClientFor(targetConfig(ctx, row));
  try {
    return await listRemote(client, row.bucket, row.prefix, signal);
  } catch (err) {
    throw new DomainError('unavailable', 'target_unreachable', `the store answered: ${storeReason(err)}`);
  } finally {
    client.destroy();
  }
}

/**
 * Brings a copy from the bucket into this install as an imported backup (the import's checks apply), e.g.
 * on a fresh host. Decrypted with SVC_BACKUP_PASSPHRASE; a recipient-only daemon cannot (422). The request
 * only records an `imports` row naming the copy and enqueues `import:<id>`: the import reconciler downloads,
 * decrypts and checks it (DESIGN.md rule 13); the API waits for that row to settle.
 */
export function importRemote(ctx: TargetCtx & { backups: BackupContext }, id: number, raw: unknown, origin: Origin): ImportRow {
  const v = parseInput(z.object({ key: z.string().min(1).max(1024) }).strict(), raw);
  const row = requireTarget(ctx, id);
  if (!v.key.startsWith(row.prefix) || !REMOTE_NAME.test(v.key.slice(row.prefix.length))) {
    throw unprocessable('invalid_request', `key must name a svc copy under the target's prefix (${row.prefix}svc-backup-YYYYMMDD-HHMMSS.tar.gz.age)`);
  }
  const passphrase = ctx.config.offsite.passphrase;
  if (!passphrase) throw unprocessable('backup_key_missing', 'SVC_BACKUP_PASSPHRASE is not set: this daemon cannot decrypt the copy (with an age recipient, use svc restore s3://... -i IDENTITY_FILE)');
  const imp = insertRemoteImport(ctx.db, ctx.backups.now(), { targetId: row.id, key: v.key });
  ctx.enqueue(keyOf('import', String(imp.id)));
  ctx.log.info('backup copy import requested', { target: row.name, object: v.key, import_id: imp.id, origin });
  return imp;
}

/**
 * Copies a completed backup to every target now: targets without a row get one, failed rows are tried at
 * once (their backoff is reset). Answers the backup's upload rows.
 */
export function uploadNow(ctx: TargetCtx, backupId: number, origin: Origin) {
  const backup = getBackup(ctx.db, backupId);
  if (!backup) throw notFound('backup');
  if (backup.status !== 'completed') throw conflict(`backup ${backupId} is ${backup.status}; only a completed backup is copied`);
  if (listTargets(ctx.db).length === 0) throw conflict('no backup target is configured');
  insertUploads(ctx.db, backup.id, backup.filename, objectKey);
  for (const u of uploadsOf(ctx.db, backup.id)) {
    if (u.status === 'failed') updateUpload(ctx.db, u.id, { nextAttemptAt: null });
    if (u.status !== 'verified' && u.status !== 'removed') ctx.enqueue(keyOf('offsite', String(u.id)));
  }
  ctx.log.info('backup upload requested', { backup_id: backupId, origin });
  return uploadsOf(ctx.db, backup.id);
}
