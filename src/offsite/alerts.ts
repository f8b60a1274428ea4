// The ONE place an off-host copy's failure (and its recovery) is announced: a log line, a Bus event
// `offsite` and a notification (issue 21 section 2), none carrying a secret.
// Announced on the transition only (first failure after a success or a start, then the recovery), not on
// every retry, so a store that stays down is one alert, not one per backoff step.
import type { Bus, OffsiteEvent } from '../events/bus.js';

export type { OffsiteEvent } from '../events/bus.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { raise } from '../notify/raise.js';

export interface AlertDeps {
  db: Db;
  /** Told `offsite` and, through raise(), `notice`. */
  bus: Bus;
  log: Logger;
}

export function reportUploadFailure(d: AlertDeps, e: Omit<OffsiteEvent, 'type'>): void {
  const event: OffsiteEvent = { type: 'backup.upload_failed', ...e };
  d.log.error('backup upload failed', { ...event });
  d.bus.emit('offsite', event);
  raise(d, {
    event: 'backup_upload_failed',
    subject: `backup ${e.filename}: off-host copy to ${e.target} failed`,
    message: `${e.error ?? 'the copy did not verify'}. The local archive is kept; svc tries again at ${e.next_attempt_at ?? 'the next pass'} (attempt ${e.attempts}).`,
    link: '/backups',
  });
}

export function reportUploadRecovered(d: AlertDeps, e: Omit<OffsiteEvent, 'type' | 'error' | 'next_attempt_at'>): void {
  const event: OffsiteEvent = { type: 'backup.upload_recovered', ...e };
  d.log.info('backup upload recovered', { ...event });
  d.bus.emit('offsite', event);
  raise(d, {
    event: 'backup_upload_recovered',
    subject: `backup ${e.filename}: off-host copy to ${e.target} verified`,
    message: `Copies to ${e.target} work again (after ${e.attempts} attempts).`,
    link: '/backups',
  });
}
