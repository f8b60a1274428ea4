/** @jsxImportSource hono/jsx */
// Deploy pieces shared by the app page and /deploys/{id}: the events list (followed live by the script
// while the deploy runs: `data-deploy-stream`, resuming after the last rendered event), and the history table.
import type { DeployRow } from '../store/schema/index.js';
import { Badge, Time } from './layout.js';

const FINAL = new Set(['success', 'failed', 'auto_rollback', 'cancelled']);
export const isFinal = (status: string) => FINAL.has(status);

export interface EventRow {
  id: number;
  timestamp: string;
  level: string;
  step: string;
  message: string;
}

/** A deploy's events as a live log region; `label` is its accessible name ("Events", "Deploy progress"). */
export const EventsList = ({ deploy, events, label }: { deploy: DeployRow; events: EventRow[]; label: string }) => (
  <ol
    class="events"
    role="log"
    aria-label={label}
    aria-live="polite"
    data-deploy-stream={isFinal(deploy.status) ? undefined : String(deploy.id)}
    data-last-id={String(events.at(-1)?.id ?? 0)}
  >
    {events.length === 0 && <li class="empty muted">No events yet: the deploy is queued.</li>}
    {events.map((e) => (
      <li class={`l-${e.level}`} data-event-id={String(e.id)}>
        <time datetime={e.timestamp}>{e.timestamp.replace(/^.*T/, '').replace('Z', '')}</time>
        <span class="mono">{e.step}</span>
        <span>{e.message}</span>
      </li>
    ))}
  </ol>
);

/** Keys only, never values (API.md: env_diff against the previous success). */
export const EnvDiff = ({ diff }: { diff: DeployRow['envDiff'] }) => {
  if (!diff) return <span class="muted">-</span>;
  const parts = [
    ...diff.added.map((k) => `+${k}`),
    ...diff.removed.map((k) => `-${k}`),
    ...diff.changed.map((k) => `~${k}`),
  ];
  return parts.length ? <span class="mono">{parts.join(' ')}</span> : <span class="muted">no change</span>;
};

export const DeployHistory = ({ deploys }: { deploys: DeployRow[] }) => (
  <div class="scroll" id="deploy-history" data-live>
    <table>
      <caption class="sr">Deploy history</caption>
      <thead>
        <tr>
          <th scope="col">Deploy</th>
          <th scope="col">Status</th>
          <th scope="col">Trigger</th>
          <th scope="col">Image</th>
          <th scope="col">Started</th>
          <th scope="col">Completed</th>
          <th scope="col">Env changes</th>
        </tr>
      </thead>
      <tbody>
        {deploys.length === 0 && (
          <tr>
            <td colspan={7} class="muted">
              No deploys yet.
            </td>
          </tr>
        )}
        {deploys.map((d) => (
          <tr>
            <td>
              <a href={`/deploys/${d.id}`}>#{d.id}</a>
            </td>
            <td>
              <Badge status={d.status} deploy={d.id} />
            </td>
            <td>{d.trigger}</td>
            <td class="mono">{d.imageRef ?? '-'}</td>
            <td>
              <Time at={d.startedAt ?? d.createdAt} />
            </td>
            <td>
              <Time at={d.completedAt} />
            </td>
            <td>
              <EnvDiff diff={d.envDiff} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);
