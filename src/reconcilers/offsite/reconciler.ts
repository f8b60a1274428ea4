// The offsite reconciler (issue 21 section 1): key `offsite:<upload id>`, one per (backup, target) row of
// `backup_uploads`. A pass copies the backup's archive to the target (src/offsite/copy.ts), verified, and
// records `verified` with the SHA-256, or `failed` with the store's reason and the next attempt (doubling
// backoff), announcing the failure and the recovery through src/offsite/alerts.ts. The rows are the queue:
// listNames returns every unsettled one, so a daemon restarted mid-upload copies it again.
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Reconciler, ReconcileCtx, Result } from '../../controller/types.js';
import type { Sealer } from '../../crypto.js';
import type { Logger } from '../../log.js';
import type { Bus } from '../../events/bus.js';
import type { Db } from '../../store/db.js';
import { nowIso } from '../../store/schema/index.js';
import { backupFilenameOf, getTarget, getUpload, listTargets, markRemoved, openCredentials, updateUpload, uploadsIn } from '../../store/offsite.js';
import type { AgeKey } from '../../offsite/age.js';
import { copyToTarget, CopyError, type CopyInput, type CopyOutcome } from '../../offsite/copy.js';
import { reportUploadFailure, reportUploadRecovered } from '../../offsite/alerts.js';
import { s3ClientFor, type TargetConfig } from '../../offsite/s3.js';
import { warmOffsite } from '../../offsite/warm.js';
import { planUpload, retryDelayMs } from './plan.js';

export interface OffsiteDeps {
  db: Db;
  sealer: Sealer;
  log: Logger;
  bus: Bus;
  now: () => number;
  backupDir: string;
  settings: { age: AgeKey | undefined; retainCount: number; retrySeconds: number };
  /** Seams for unit tests; default to the real S3 client and copy. */
  clientFor?: (t: TargetConfig) => S3Client;
  copy?: (i: CopyInput) => Promise<CopyOutcome>;
  warm?: (age: AgeKey | undefined) => Promise<void>;
  /** A row changed (wakes waiting requests and live pages). */
  changed?: () => void;
}

const ID = /^[1-9][0-9]*$/;
/** The key that loads what copies need (src/offsite/warm.ts); a target's creation enqueues it. */
export const WARM = 'warm';

export function createOffsiteReconciler(d: OffsiteDeps): Reconciler {
  const clientFor = d.clientFor ?? s3ClientFor;
  const copy = d.copy ?? copyToTarget;

  const pass = async (id: number, ctx?: ReconcileCtx): Promise<Result> => {
    const row = getUpload(d.db, id);
    if (!row) return {};
    const plan = planUpload(row, d.now());
    if (plan.action === 'none') return {};
    if (plan.action === 'wait') return { requeueAfterMs: plan.inMs };
    const target = getTarget(d.db, row.targetId);
    const filename = backupFilenameOf(d.db, row.backupId);
    if (!target || !filename) return {}; // cascaded away
    const wasFailing = row.status === 'failed';
    const attempts = row.attempts + 1;
    updateUpload(d.db, id, { status: 'uploading', attempts });
    d.changed?.();
    const creds = openCredentials(d.sealer, target);
    const config: TargetConfig = { name: target.name, endpoint: target.endpoint, region: target.region, bucket: target.bucket, prefix: target.prefix, accessKey: creds.access_key, secretKey: creds.secret_key };
    const client = clientFor(config);
    const started = d.now();
    try {
      const out = await copy({
        client,
        bucket: target.bucket,
        prefix: target.prefix,
        key: row.key,
        file: join(d.backupDir, filename),
        age: d.settings.age,
        retain: d.settings.retainCount,
        signal: ctx?.signal,
      });
      updateUpload(d.db, id, { status: 'verified', sha256: out.sha256, sizeBytes: out.size, verifiedAt: nowIso(), verifiedBy: out.verifiedBy, error: null, nextAttemptAt: null });
      markRemoved(d.db, target.id, out.pruned);
      d.changed?.();
      d.log.info('backup uploaded', { backup_id: row.backupId, filename, target: target.name, size: out.size, sha256: out.sha256, verified_by: out.verifiedBy, duration_ms: d.now() - started, pruned: out.pruned.length });
      if (out.retentionError) d.log.error('backup remote retention failed', { target: target.name, error: out.retentionError });
      if (wasFailing) reportUploadRecovered(d, { backup_id: row.backupId, filename, target: target.name, attempts });
      return {};
    } catch (err) {
      if (ctx?.signal.aborted) {
        // Stopping: the row stays `uploading` and is copied again at the next start.
        d.log.info('backup upload interrupted by the stop', { backup_id: row.backupId, target: target.name });
        return {};
      }
      const reason = err instanceof CopyError ? err.message : `upload: ${err instanceof Error ? err.message : String(err)}`;
      const delay = retryDelayMs(attempts, d.settings.retrySeconds);
      const next = new Date(d.now() + delay).toISOString().replace(/\.\d{3}Z$/, 'Z');
      updateUpload(d.db, id, { status: 'failed', error: reason, nextAttemptAt: next });
      d.changed?.();
      if (!wasFailing) reportUploadFailure(d, { backup_id: row.backupId, filename, target: target.name, error: reason, attempts, next_attempt_at: next });
      else d.log.warn('backup upload failed again', { backup_id: row.backupId, target: target.name, error: reason, attempts, next_attempt_at: next });
      return { requeueAfterMs: delay };
    } finally {
      client.destroy();
    }
  };

  return {
    kind: 'offsite',
    // `warm` while a target exists: the SDK and the passphrase header are loaded at start, not in a copy.
    listNames: () => [...(listTargets(d.db).length > 0 ? [WARM] : []), ...uploadsIn(d.db, ['pending', 'uploading', 'failed']).map((u) => String(u.id))],
    reconcile: async (name, ctx) => {
      if (name === WARM) {
        if (listTargets(d.db).length > 0) await (d.warm ?? warmOffsite)(d.settings.age);
        return {};
      }
      return ID.test(name) ? pass(Number(name), ctx) : {};
    },
  };
}
