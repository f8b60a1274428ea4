// Pure decisions of the service reconciler (DESIGN.md rule 5): from the desired row and what the engine
// shows, the one next step and the status that step leaves. No I/O here, so every transition of SPEC.md
// 3.1 (plus deletion, stop/start and self-healing) is a table test.
import type { ServiceStatus } from '../../store/schema/services.js';

export interface ServiceFacts {
  status: ServiceStatus;
  desiredRunning: boolean;
  /** `deleted_at` is set: clean up, then drop the row. */
  deleting: boolean;
  purge: boolean;
  dataDirExists: boolean;
  /** Garage only: the bucket and key are not created yet. */
  needsProvisioning: boolean;
  healFailures: number;
  healNotBeforeMs: number | null;
  /** Another image of the same version to run (SVC_IMAGE_<TYPE>_<MAJOR> changed): a minor update. */
  newerImage?: string;
}

export interface ObservedService {
  exists: boolean;
  running: boolean;
  exitCode?: number;
  /** Engine error of the last start, if any. */
  error?: string;
  startedAtMs?: number;
}

export type ServiceAction =
  | { kind: 'remove' }
  | { kind: 'purge' }
  | { kind: 'forget' }
  | { kind: 'stop' }
  | { kind: 'create'; counts: boolean }
  | { kind: 'start'; counts: boolean }
  /** The container gave up while provisioning: record it as a failure (then retry after the backoff). */
  | { kind: 'fail'; message: string }
  | { kind: 'backoff'; afterMs: number }
  | { kind: 'wait-ready'; afterMs: number }
  | { kind: 'provision-garage' }
  | { kind: 'mark-active' }
  /** A minor update: the container goes, the next pass creates it from `image` on the same data. */
  | { kind: 'update-image'; image: string }
  | { kind: 'none'; afterMs?: number; resetHeal?: boolean };

export interface ServicePlan {
  action: ServiceAction;
  /** The status to show once the action is done (written only when it differs). */
  status: ServiceStatus;
}

/**
 * Readiness polls while a service starts, like a deploy's health check: every 50 ms for the first 15 s
 * (databases are usually ready within that; the exec checks are gated by a TCP connect, so a poll is
 * cheap), then 250 ms until a minute, then 1 s. Readiness is noticed within one short poll of the engine.
 */
export const READY_POLL_MIN_MS = 50;
export const READY_POLL_MAX_MS = 1_000;
export const readyPollMs = (upMs: number) => (upMs < 15_000 ? READY_POLL_MIN_MS : upMs < 60_000 ? 250 : READY_POLL_MAX_MS);
/** A container that stayed up this long after a heal is healthy again: the backoff starts over. */
export const HEAL_RESET_AFTER_MS = 60_000;

/**
 * The next step for one service. `ready` is the readiness check's answer, observed only for a running
 * container of a service that is not yet `active` (undefined otherwise).
 */
export function planService(f: ServiceFacts, c: ObservedService, ready: boolean | undefined, nowMs: number): ServicePlan {
  const keep = f.status;
  if (f.deleting) {
    if (c.exists) return { action: { kind: 'remove' }, status: keep };
    if (f.purge && f.dataDirExists) return { action: { kind: 'purge' }, status: keep };
    return { action: { kind: 'forget' }, status: keep };
  }
  if (!f.desiredRunning) {
    return { action: c.running ? { kind: 'stop' } : { kind: 'none' }, status: 'stopped' };
  }
  const waitMs = f.healFailures > 0 && f.healNotBeforeMs !== null ? f.healNotBeforeMs - nowMs : 0;
  if (!c.running) {
    if (c.exists && f.status === 'provisioning') {
      const why = c.error ? c.error : `container exited with code ${c.exitCode ?? 'unknown'} before it was ready`;
      return { action: { kind: 'fail', message: why }, status: 'error' };
    }
    if (waitMs > 0) return { action: { kind: 'backoff', afterMs: waitMs }, status: keep };
    // A crash of a ready service (or a container removed mid-provisioning) counts toward the backoff; a
    // first start, a requested start, or the retry of an already counted failure (`error`) does not.
    const counts = f.status === 'active' || f.status === 'provisioning';
    return { action: c.exists ? { kind: 'start', counts } : { kind: 'create', counts }, status: 'provisioning' };
  }
  if (f.status === 'active') {
    if (f.newerImage) return { action: { kind: 'update-image', image: f.newerImage }, status: 'provisioning' };
    if (f.healFailures === 0) return { action: { kind: 'none' }, status: 'active' };
    const upMs = nowMs - (c.startedAtMs ?? nowMs);
    if (upMs >= HEAL_RESET_AFTER_MS) return { action: { kind: 'none', resetHeal: true }, status: 'active' };
    return { action: { kind: 'none', afterMs: HEAL_RESET_AFTER_MS - upMs }, status: 'active' };
  }
  if (!ready) {
    const afterMs = readyPollMs(nowMs - (c.startedAtMs ?? nowMs));
    return { action: { kind: 'wait-ready', afterMs }, status: f.status === 'error' ? 'error' : 'provisioning' };
  }
  if (f.needsProvisioning) {
    if (f.status === 'error' && waitMs > 0) return { action: { kind: 'backoff', afterMs: waitMs }, status: keep };
    return { action: { kind: 'provision-garage' }, status: f.status === 'error' ? 'error' : 'provisioning' };
  }
  return { action: { kind: 'mark-active' }, status: 'active' };
}

/**
 * A start the user asked for (`services.start_requested_at`) that the heal counters were not reset for yet
 * (`service_status.start_seen_at`): a fresh intent forgets the backoff of earlier failures.
 */
export const isNewStartRequest = (requestedAt: string | null, seenAt: string | null): boolean => requestedAt !== null && requestedAt !== seenAt;
