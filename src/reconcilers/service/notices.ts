// What the service reconciler tells the operator (src/notify/raise.ts): a service that went to `error`, and
// its return to `active`. Raised from the one status writer (actions.ts writeStatus) on the transition;
// the storm rule keeps a service that retries in a loop to one alert and one recovery.
import { raise, type NoticeTarget } from '../../notify/raise.js';

export function serviceStatusChanged(to: NoticeTarget, row: { id: number; name: string; type: string }, status: string, error: string | null | undefined, nowMs: number): void {
  const storm = { key: `service:${row.id}:error` };
  if (status === 'error') {
    raise(to, {
      event: 'service_error',
      subject: `service ${row.name} (${row.type}) is in error`,
      message: `${error ?? 'svc could not start or provision it'}. svc retries with backoff; apps linked to it may fail meanwhile.`,
      link: `/services/${row.id}`,
      storm: { ...storm, signal: 'fire' },
    }, nowMs);
  } else if (status === 'active') {
    raise(to, {
      event: 'service_recovered',
      subject: `service ${row.name} (${row.type}) is active again`,
      message: `${row.name} is running and ready again.`,
      link: `/services/${row.id}`,
      storm: { ...storm, signal: 'resolve' },
    }, nowMs);
  }
}
