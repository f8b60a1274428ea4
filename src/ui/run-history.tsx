/** @jsxImportSource hono/jsx */
// A list of job runs (issue 22), newest first: when each started and ended, how, and a link to its output.
// Shown on the app page (every job and one-off) and on a job's page.
import type { JobRunRow } from '../store/schema/index.js';
import { Time } from './layout.js';

export const jobUrl = (appId: number, job: string) => `/apps/${appId}/jobs/${encodeURIComponent(job)}`;

/** How long a finished run took, in words. */
export function duration(r: Pick<JobRunRow, 'startedAt' | 'finishedAt'>): string {
  if (!r.startedAt || !r.finishedAt) return '-';
  const s = Math.max(0, Math.round((Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000));
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

const TONE: Record<string, string> = { succeeded: 's-ok', failed: 's-bad', timed_out: 's-bad', pending: 's-warn', running: 's-warn' };
/** A run's status as a badge, coloured like a deploy's (succeeded green, failed and timed out red). */
export const RunStatus = ({ r }: { r: JobRunRow }) => (
  <>
    <span class={`badge ${TONE[r.status] ?? 's-idle'}`}>{r.status}</span>
    {r.error && <span class="muted"> {r.error}</span>}
  </>
);

/** A job's runs, newest first: when, how it ended, and a link to each run's output. */
export const RunHistory = ({ appId, runs, label, showJob }: { appId: number; runs: JobRunRow[]; label: string; showJob?: boolean }) => (
  <div class="scroll">
    <table aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Run</th>
          {showJob && <th scope="col">Job</th>}
          <th scope="col">Trigger</th>
          <th scope="col">Status</th>
          <th scope="col">Exit code</th>
          <th scope="col">Started</th>
          <th scope="col">Ended</th>
          <th scope="col">Took</th>
        </tr>
      </thead>
      <tbody>
        {runs.length === 0 && (
          <tr>
            <td colspan={showJob ? 8 : 7} class="muted">
              No runs yet.
            </td>
          </tr>
        )}
        {runs.map((r) => (
          <tr>
            <td>
              <a href={`/apps/${appId}/runs/${r.id}`}>
                #{r.id}
                <span class="sr"> output</span>
              </a>
            </td>
            {showJob && <td class="mono">{r.job ? <a href={jobUrl(appId, r.job)}>{r.job}</a> : 'one-off'}</td>}
            <td>{r.trigger}</td>
            <td>
              <RunStatus r={r} />
            </td>
            <td>{r.exitCode ?? '-'}</td>
            <td>
              <Time at={r.startedAt} />
            </td>
            <td>
              <Time at={r.finishedAt} />
            </td>
            <td>{duration(r)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

