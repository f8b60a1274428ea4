// Per-service backup endpoints (docs/api.md "Per-service backups and restores", issue 33 section 3): thin
// adapters over src/desired/service-backups.ts. Taking a backup and restoring wait for the reconciler's work
// (bounded by the client) and answer its outcome; `?wait=false` answers 202 at once with the row.
import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { conflict, DomainError, invalid } from '../errors.js';
import {
  backupPolicySchema, backupService, deleteServiceBackup, getServiceRestoreOp, restoreService, restoreServiceSchema, serviceBackupOf, setBackupPolicy,
  settledServiceBackup, settledServiceRestore,
} from '../desired/service-backups.js';
import { getService } from '../store/services.js';
import { getServiceBackup, serviceBackupsOf, serviceRestoresOf } from '../store/service-backups.js';
import { serviceBackupPath } from '../reconcilers/service-backup/take.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { notFound } from '../errors.js';
import { serviceBackupJson, serviceBackupJsonSchema, serviceBackupPolicySchema, servicePolicyJson, serviceRestoreJson, serviceRestoreJsonSchema } from '../presenters/service-backups.js';
import { serviceJson, serviceJsonSchema } from '../presenters/services.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';

const op = operations('Services');

const waits = (c: Context) => {
  const w = c.req.query('wait');
  if (w === undefined || w === 'true' || w === '1') return true;
  if (w === 'false' || w === '0') return false;
  throw invalid('wait must be true or false', undefined, 'validation_failed');
};

const restoreAnswer = z.object({ restore: serviceRestoreJsonSchema, service: serviceJsonSchema });

export function serviceBackupRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const progress = deps.backups?.progress;
  const serviceId = (c: Context) => {
    const id = idParam(c, 'id', 'service');
    const row = getService(db, id);
    if (!row || row.deletedAt) throw notFound('service');
    return row.id;
  };
  const backupOf = (c: Context) => serviceBackupOf(deps, serviceId(c), idParam(c, 'backupID', 'backup'));

  r.get('/services/:id/backups', op({ summary: "The service's own backups, newest first (with their off-host copies)", response: z.array(serviceBackupJsonSchema) }), (c) =>
    c.json(serviceBackupsOf(db, serviceId(c)).map((b) => serviceBackupJson(db, b))),
  );

  r.post('/services/:id/backups', op({ summary: 'Back up this service alone (its dump, compressed, copied to the backup targets); waits for it', query: { wait: 'false: answer 202 at once' }, status: 201, response: serviceBackupJsonSchema, more: { 202: { description: 'Started (wait=false), or the client left first: poll Location', response: serviceBackupJsonSchema } }, errors: { 409: 'conflict: not active, a backup or restore of it runs, or its type has none', 500: 'backup_failed (the record, with its error)' } }), async (c) => {
    const b = backupService(deps, serviceId(c), restOrigin(c));
    const location = `/api/services/${b.serviceId}/backups/${b.id}`;
    if (!waits(c) || !progress) return c.json(serviceBackupJson(db, b), 202, { location });
    const done = await settledServiceBackup(deps, progress, b.id, c.req.raw.signal);
    if (!done) return c.json(serviceBackupJson(db, getServiceBackup(db, b.id) ?? b), 202, { location });
    if (done.status === 'failed') return c.json({ ...serviceBackupJson(db, done), code: 'backup_failed' }, 500);
    return c.json(serviceBackupJson(db, done), 201, { location });
  });

  r.get('/services/:id/backups/:backupID', op({ summary: 'One service backup', response: serviceBackupJsonSchema }), (c) => c.json(serviceBackupJson(db, backupOf(c))));

  r.get('/services/:id/backups/:backupID/download', op({ summary: 'Download the dump (gzip: SQL for psql or mysql, an RDB for redis; audited)', media: { type: 'application/gzip', description: 'the compressed dump' }, errors: { 409: 'conflict: not completed' } }), (c) => {
    const b = backupOf(c);
    if (b.status !== 'completed') throw conflict(`backup ${b.id} is ${b.status}; only a completed backup has a file`);
    const path = serviceBackupPath(deps.config.dataDir, b);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new DomainError('not_found', 'not_found', `the file of backup ${b.id} is missing from the service-backups directory`);
    }
    return c.body(Readable.toWeb(createReadStream(path)) as ReadableStream, 200, {
      'content-type': 'application/gzip',
      'content-length': String(size),
      'content-disposition': `attachment; filename="${b.filename}"`,
      'cache-control': 'no-store',
    });
  });

  r.delete('/services/:id/backups/:backupID', op({ summary: 'Delete a service backup (its file and its off-host copies go at the next sweep)', status: 204, errors: { 409: 'conflict: running, used by a restore, or an open upgrade’s' } }), (c) => {
    const b = backupOf(c);
    deleteServiceBackup(deps, b.serviceId, b.id, restOrigin(c));
    return c.body(null, 204);
  });

  r.get('/services/:id/backup', op({ summary: "The service's backup schedule and retention", response: serviceBackupPolicySchema }), (c) => c.json(servicePolicyJson(db, serviceId(c))));
  r.put('/services/:id/backup', op({ summary: "Set the service's backup schedule and retention (`interval_minutes` 0: none scheduled)", body: backupPolicySchema, response: serviceBackupPolicySchema, errors: { 409: 'conflict: its type has no per-service backups' } }), async (c) =>
    c.json(setBackupPolicy(deps, serviceId(c), await jsonBody(c))),
  );

  r.post('/services/:id/restore', op({ summary: 'Restore one of its backups into this service (a safety backup first) or, with `into`, into a new service; waits for it', body: restoreServiceSchema, query: { wait: 'false: answer 202 at once' }, response: restoreAnswer, more: { 202: { description: 'Started (wait=false), or the client left first: poll Location', response: restoreAnswer } }, errors: { 409: 'conflict: not active, being upgraded, restored or backed up; a backup of a later version', 500: 'restore_failed (the restore, with its error)' } }), async (c) => {
    const { restore, service } = restoreService(deps, serviceId(c), await jsonBody(c), restOrigin(c));
    const location = `/api/services/${service.id}/restores/${restore.id}`;
    const answer = (row = restore) => ({ restore: serviceRestoreJson(row), service: serviceJson(db, getService(db, service.id) ?? service) });
    if (!waits(c) || !progress) return c.json(answer(), 202, { location });
    const done = await settledServiceRestore(deps, progress, restore.id, c.req.raw.signal);
    if (!done) return c.json(answer(getServiceRestoreOp(deps, restore.id)), 202, { location });
    if (done.status === 'failed') return c.json({ error: done.error ?? 'the restore failed', code: 'restore_failed', ...answer(done) }, 500);
    return c.json(answer(done), 200, { location });
  });

  r.get('/services/:id/restores', op({ summary: 'Restores into this service, newest first', response: z.array(serviceRestoreJsonSchema) }), (c) => c.json(serviceRestoresOf(db, serviceId(c)).map(serviceRestoreJson)));
  r.get('/services/:id/restores/:restoreID', op({ summary: 'One restore into this service', response: serviceRestoreJsonSchema }), (c) => {
    const id = serviceId(c);
    const row = getServiceRestoreOp(deps, idParam(c, 'restoreID', 'restore'));
    if (row.serviceId !== id) throw notFound('restore');
    return c.json(serviceRestoreJson(row));
  });

  return r;
}
