// Backup targets (docs/api.md "Off-host backup copies"), thin adapters over src/desired/backup-targets.ts:
// CRUD, the "test" action (200 with `ok: true`, or 502 `target_test_failed` with the store's own error),
// the copies a bucket holds, and their import into this install.
import { Hono, type Context } from 'hono';
import { listTargets as listTargetRows } from '../store/offsite.js';
import { getImport } from '../store/backup-ops.js';
import { getBackup } from '../store/backups.js';
import { unavailable, unprocessable } from '../errors.js';
import {
  createTarget, deleteTarget, importRemote, remoteCopies, requireTarget, testTarget, updateTarget, uploadNow,
} from '../desired/backup-targets.js';
import { settledImport } from '../desired/backups.js';
import { backupContext, failureStatus } from './backups.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { backupWithCopiesJson, importJson, targetJson, uploadJson } from '../presenters/backups.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { backupJsonSchema, importJsonSchema, targetJsonSchema, uploadJsonSchema } from '../presenters/backups.js';
import { targetCreateSchema, targetUpdateSchema } from '../desired/backup-targets.js';

const op = operations('Backups');

export function backupTargetRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db, sealer } = deps;
  const ctx = { db, sealer, log: deps.log, enqueue: deps.enqueue, config: deps.config };
  const idOf = (c: Context) => idParam(c, 'id', 'backup target');

  r.get('/backup-targets', op({ summary: 'Off-host backup targets (S3)', response: z.array(targetJsonSchema) }), (c) => c.json(listTargetRows(db).map((t) => targetJson(t, sealer))));
  r.post('/backup-targets', op({ summary: 'Add a target', body: targetCreateSchema, status: 201, response: targetJsonSchema, errors: { 409: 'conflict: the name is taken' } }), async (c) => c.json(targetJson(createTarget(ctx, await jsonBody(c), restOrigin(c)), sealer), 201));
  r.get('/backup-targets/:id', op({ summary: 'One target', response: targetJsonSchema }), (c) => c.json(targetJson(requireTarget(ctx, idOf(c)), sealer)));
  r.put('/backup-targets/:id', op({ summary: 'Change a target', body: targetUpdateSchema, response: targetJsonSchema }), async (c) => c.json(targetJson(updateTarget(ctx, idOf(c), await jsonBody(c), restOrigin(c)), sealer)));
  r.delete('/backup-targets/:id', op({ summary: 'Remove a target', status: 204 }), (c) => {
    deleteTarget(ctx, idOf(c), restOrigin(c));
    return c.body(null, 204);
  });

  r.post('/backup-targets/:id/test', op({ summary: 'Write, read back and delete a probe object', response: z.object({ ok: z.literal(true), key: z.string().describe('the probe object, deleted again'), duration_ms: z.number() }).meta({ id: 'BackupTargetTest' }), errors: { 502: 'target_test_failed (details.step, details.store_error)' } }), async (c) => {
    const res = await testTarget(ctx, idOf(c), c.req.raw.signal);
    if (res.ok) return c.json(res);
    return c.json({ ok: false, error: `${res.step} failed: ${res.error}`, code: 'target_test_failed', details: { step: res.step, store_error: res.error } }, 502);
  });

  r.get('/backup-targets/:id/remote', op({ summary: 'The backup copies the bucket holds', response: z.array(z.object({ key: z.string(), filename: z.string(), size_bytes: z.number(), last_modified: z.string().nullable() })), errors: { 502: 'the store refused', 503: 'unavailable' } }), async (c) => {
    const list = await remoteCopies(ctx, idOf(c), c.req.raw.signal);
    return c.json(list.map((x) => ({ key: x.key, filename: x.filename, size_bytes: x.size, last_modified: x.lastModified })));
  });

  r.post('/backup-targets/:id/remote/import', op({ summary: 'Import a copy from the bucket', body: z.object({ key: z.string() }), query: { wait: 'false: answer 202 at once' }, status: 201, response: backupJsonSchema, more: { 202: { description: 'Started: poll /api/backups/imports/{id}', response: importJsonSchema } }, errors: { 400: 'invalid_archive', 409: 'conflict', 422: 'encryption_key_mismatch' } }), async (c) => {
    const wait = c.req.query('wait') !== 'false';
    const bctx = backupContext(deps);
    const row = importRemote({ ...ctx, backups: bctx }, idOf(c), await jsonBody(c), restOrigin(c));
    if (!wait || !deps.backups) return c.json(importJson(row), 202, { location: `/api/backups/imports/${row.id}` });
    const done = (await settledImport(bctx, row.id, c.req.raw.signal)) ?? getImport(db, row.id) ?? row;
    const backup = done.backupId ? getBackup(db, done.backupId) : undefined;
    // The imported record as GET /api/backups/{id} shows it, with its off-host copies.
    if (done.status === 'completed' && backup) return c.json(backupWithCopiesJson(db, backup), 201);
    if (done.status !== 'failed') return c.json(importJson(done), 202, { location: `/api/backups/imports/${row.id}` });
    // The fetch's own failures answer as when the request fetched the copy itself (API.md).
    if (done.code === 'target_unreachable') throw unavailable(done.code, done.error ?? 'the store did not answer');
    if (done.code === 'backup_key_mismatch' || done.code === 'copy_corrupted' || done.code === 'backup_key_missing') throw unprocessable(done.code, done.error ?? 'the copy could not be decrypted');
    return c.json({ error: done.error ?? 'the import failed', code: done.code ?? 'import_failed', import: importJson(done) }, failureStatus(done.code));
  });

  r.post('/backups/:id/upload', op({ summary: 'Upload a backup to every target now', status: 202, response: z.object({ remotes: z.array(uploadJsonSchema) }), errors: { 409: 'conflict: not completed', 422: 'no target' } }), (c) => {
    const rows = uploadNow(ctx, idParam(c, 'id', 'backup'), restOrigin(c));
    const names = new Map(listTargetRows(db).map((t) => [t.id, t.name]));
    return c.json({ remotes: rows.map((u) => uploadJson(u, names.get(u.targetId))) }, 202);
  });

  return r;
}

