/** @jsxImportSource hono/jsx */
// The status sentence beside an app's status badge (dashboard, app page): src/presenters/status-line.ts,
// so the pages say what `svc apps` says.
import type { AppView } from '../store/app-view.js';
import { statusLine, type StatusFacts } from '../presenters/status-line.js';

/** The API-shaped facts of an app row (what appJson shows). */
export const statusFactsOf = (a: Pick<AppView, 'status' | 'serving' | 'liveImage' | 'statusReason' | 'routeError'> & Partial<Pick<AppView, 'certError'>>): StatusFacts => ({
  status: a.status,
  serving: a.serving,
  live_image: a.liveImage,
  status_reason: a.statusReason,
  route_error: a.routeError,
  certificate_error: a.certError ?? null,
});

export const StatusLine = ({ app }: { app: StatusFacts }) => (
  <span class={`status-line${app.status === 'error' || app.route_error || app.certificate_error ? ' warn' : ' muted'}`} data-status-line>
    {statusLine(app)}
  </span>
);
