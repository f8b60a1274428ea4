// Pure decisions of a guarded major upgrade (issue 33): from the upgrade record and what the engine shows,
// the one next step. The reconciler (upgrade.ts) does it and records the outcome; a daemon that dies in a
// step finds the record at that step with its attempt counted, so every step here is safe to begin again
// or turns into a rollback. Table-tested in test/unit/services/upgrade-plan.test.ts.
import type { ServiceUpgradeRow, UpgradeStep } from '../../store/schema/index.js';

export interface UpgradeFacts {
  oldRunning: boolean;
  newExists: boolean;
  newRunning: boolean;
  /** The new container answers its readiness check (observed only while waiting for it). */
  newReady?: boolean;
  /** Deploys of the linked apps still pending or running (the redeploy onto the new or the old side). */
  appDeploysOpen: number;
  /** How often the move was begun again after a pass that began it never finished. */
  moveRestarts: number;
  nowMs: number;
  /** When the current step began (the record's updated_at), for the readiness deadline. */
  stepSinceMs: number;
}

export type UpgradeAction =
  | { kind: 'run'; step: UpgradeStep }
  /** A pass began the move and never finished (the daemon died): the new side is made again, empty. */
  | { kind: 'restart-move' }
  | { kind: 'wait'; afterMs: number }
  | { kind: 'fail'; reason: string };

/** A step begun this many times without finishing fails the upgrade (a step that crashes the daemon). */
export const UPGRADE_STEP_ATTEMPTS = 3;
/** The new container must be ready within this (an empty database starts in seconds). */
export const UPGRADE_READY_DEADLINE_MS = 5 * 60_000;
/** A move begun again more often than this after crashes rolls back instead. */
export const UPGRADE_MOVE_RESTARTS = 2;
/** Polls while waiting for readiness or for the apps' deploys. */
export const UPGRADE_POLL_MS = 250;

/** Steps before the switch: any failure there rolls back to the old one, which never stopped serving. */
export const BEFORE_SWITCH: readonly UpgradeStep[] = ['backup', 'create', 'wait_ready', 'freeze', 'move', 'verify'];

export function planUpgrade(u: Pick<ServiceUpgradeRow, 'status' | 'step' | 'attempts' | 'request' | 'switchedAt' | 'keepDays'>, f: UpgradeFacts): UpgradeAction {
  const pre = BEFORE_SWITCH.includes(u.step);
  if (u.status === 'running' && pre && !f.oldRunning) return { kind: 'fail', reason: 'the old container stopped during the upgrade' };
  if (u.step === 'move' && u.attempts > 0) {
    return f.moveRestarts >= UPGRADE_MOVE_RESTARTS ? { kind: 'fail', reason: `the move was begun ${f.moveRestarts + 1} times without finishing` } : { kind: 'restart-move' };
  }
  if (u.attempts >= UPGRADE_STEP_ATTEMPTS && u.step !== 'kept' && u.step !== 'drain' && u.step !== 'revert_drain') {
    if (pre) return { kind: 'fail', reason: `step ${u.step} was begun ${u.attempts} times without finishing` };
  }
  switch (u.step) {
    case 'wait_ready':
      if (!f.newExists || (!f.newRunning && f.newExists)) return { kind: 'fail', reason: 'the new container stopped before it was ready' };
      if (f.newReady) return { kind: 'run', step: 'wait_ready' };
      if (f.nowMs - f.stepSinceMs > UPGRADE_READY_DEADLINE_MS) return { kind: 'fail', reason: 'the new container was not ready within 5 minutes' };
      return { kind: 'wait', afterMs: UPGRADE_POLL_MS };
    case 'drain':
    case 'revert_drain':
      // The old (or, on a revert, the new) container stays up until the apps run on the other side.
      return f.appDeploysOpen > 0 ? { kind: 'wait', afterMs: UPGRADE_POLL_MS } : { kind: 'run', step: u.step };
    case 'kept': {
      if (u.request === 'revert') return { kind: 'run', step: 'revert' };
      const keptUntil = Date.parse(u.switchedAt ?? '') + u.keepDays * 86_400_000;
      if (u.request === 'confirm' || f.nowMs >= keptUntil) return { kind: 'run', step: 'confirm' };
      return { kind: 'wait', afterMs: Math.min(keptUntil - f.nowMs, 3_600_000) };
    }
    case 'done':
      return { kind: 'wait', afterMs: 0 };
    default:
      return { kind: 'run', step: u.step };
  }
}
