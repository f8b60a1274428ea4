// The ONE place an off-host copy's failure (and its recovery) is announced, so notifications (issue 21
// section 2) are wired here and nowhere else: a log line and a Bus event `offsite` carrying no secret.
// Announced on the transition only (first failure after a success or a start, then the recovery), not on
// every retry, so a store that stays down is one alert, not one per backoff step.
import type { Bus, OffsiteEvent } from '../events/bus.js';

export type { OffsiteEvent } from '../events/bus.js';
import type { Logger } from '../log.js';

export interface AlertDeps {
  bus?: Bus;
  log: Logger;
}

export function reportUploadFailure(d: AlertDeps, e: Omit<OffsiteEvent, 'type'>): void {
  const event: OffsiteEvent = { type: 'backup.upload_failed', ...e };
  d.log.error('backup upload failed', { ...event });
  d.bus?.emit('offsite', event);
}

export function reportUploadRecovered(d: AlertDeps, e: Omit<OffsiteEvent, 'type' | 'error' | 'next_attempt_at'>): void {
  const event: OffsiteEvent = { type: 'backup.upload_recovered', ...e };
  d.log.info('backup upload recovered', { ...event });
  d.bus?.emit('offsite', event);
}
