// Pure decisions of per-service backups (issue 33 section 3): which keys there are, which backups
// retention drops, and the next step of a restore. Table-tested in test/unit/service-backups/plan.test.ts.
import type { ServiceBackupRow, ServiceRestoreRow } from '../../store/schema/index.js';

/** The names of the `service-backup` kind: a backup to take, a copy, a restore, and the two sweeps. */
export type ServiceBackupKey = { kind: 'backup'; id: number } | { kind: 'copy'; id: number } | { kind: 'restore'; id: number } | { kind: 'schedule' } | { kind: 'files' };

const ID = '([1-9][0-9]*)';
export function parseServiceBackupKey(name: string): ServiceBackupKey | undefined {
  if (name === 'schedule' || name === 'files') return { kind: name };
  const m = new RegExp(`^(?:(copy|restore)-)?${ID}$`).exec(name);
  if (!m) return undefined;
  return { kind: (m[1] as 'copy' | 'restore' | undefined) ?? 'backup', id: Number(m[2]) };
}
export const serviceBackupKeyName = (k: ServiceBackupKey): string => (k.kind === 'schedule' || k.kind === 'files' ? k.kind : k.kind === 'backup' ? String(k.id) : `${k.kind}-${k.id}`);

/**
 * The backups of one service retention drops: beyond the newest `retain` completed ones, every older
 * completed or failed record, except those still needed (an open upgrade's step 1, a running restore's
 * source or safety backup). A running record is never dropped. `newestFirst` is one service's records.
 */
export function beyondServiceRetention(newestFirst: Pick<ServiceBackupRow, 'id' | 'status'>[], retain: number, needed: ReadonlySet<number>): number[] {
  const keep = Math.max(1, retain);
  let completed = 0;
  const out: number[] = [];
  for (const b of newestFirst) {
    if (b.status === 'running') continue;
    if (b.status === 'completed') completed++;
    const beyond = b.status === 'completed' ? completed > keep : completed >= keep;
    if (beyond && !needed.has(b.id)) out.push(b.id);
  }
  return out;
}

export interface RestoreFacts {
  /** The backup to load: completed with its file on disk (`running`: taken from a full backup's archive now). */
  backup: 'ready' | 'missing' | 'not_completed' | 'running';
  /** The service to load into. */
  target: 'active' | 'starting' | 'gone' | 'stopped' | 'other_node';
  nowMs: number;
  /** When the restore's current step began (its updated_at). */
  stepSinceMs: number;
}

export type RestorePlan = { kind: 'run'; step: 'safety' | 'load' } | { kind: 'wait'; afterMs: number } | { kind: 'fail'; reason: string } | { kind: 'none' };

/** A step begun this many times without finishing fails the restore (a step that crashes the daemon). */
export const RESTORE_STEP_ATTEMPTS = 3;
/** A new service must be active within this for a restore into it. */
export const TARGET_READY_DEADLINE_MS = 10 * 60_000;
export const RESTORE_POLL_MS = 500;

export function planServiceRestore(r: Pick<ServiceRestoreRow, 'status' | 'step' | 'attempts' | 'intoNew'>, f: RestoreFacts): RestorePlan {
  if (r.status !== 'running' || r.step === 'done') return { kind: 'none' };
  if (f.backup === 'missing') return { kind: 'fail', reason: 'the backup file is missing from the service-backups directory' };
  if (f.backup === 'not_completed') return { kind: 'fail', reason: 'the backup is not a completed one' };
  if (f.backup === 'running' && r.step !== 'safety') return { kind: 'wait', afterMs: RESTORE_POLL_MS };
  if (f.target === 'gone') return { kind: 'fail', reason: 'the service to restore into was deleted' };
  if (f.target === 'other_node') return { kind: 'fail', reason: 'the service keeps its data on another Swarm node; service restores run on the manager only for now' };
  if (r.attempts >= RESTORE_STEP_ATTEMPTS) return { kind: 'fail', reason: `step ${r.step} was begun ${r.attempts} times without finishing` };
  if (f.target !== 'active') {
    // A new service is still being created; the backup's own service must already run (nothing to wait for).
    if (r.step === 'wait_target' && f.target === 'starting' && f.nowMs - f.stepSinceMs < TARGET_READY_DEADLINE_MS) return { kind: 'wait', afterMs: RESTORE_POLL_MS };
    if (f.target === 'stopped') return { kind: 'fail', reason: 'the service is stopped; start it and restore again' };
    return { kind: 'fail', reason: r.intoNew ? 'the new service did not become active within 10 minutes' : 'the service is not active; restore when it is' };
  }
  return { kind: 'run', step: r.step === 'safety' ? 'safety' : 'load' };
}
