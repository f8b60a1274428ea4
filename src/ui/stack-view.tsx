/** @jsxImportSource hono/jsx */
// The pieces of the stack pages (issue 32): the stacks table, a stack's services with their status and the
// way to each one's logs, terminal and metrics (a service is one of svc's apps: those are its app pages),
// a plan (what a deploy would do, service by service), a stack deploy's steps, and the Compose form with
// its "Plan" and "Create" buttons. Pure functions of the API's own JSON (src/presenters/stacks.ts).
import { stackJson, type stackDeployJson, type stackPlanJson } from '../presenters/stacks.js';
import type { EdgeDeps } from '../http/deps.js';
import { getApp } from '../store/apps.js';
import type { AppView } from '../store/app-view.js';
import { getStack, listStackDeploys, listStacks, listStackVars, stackApps } from '../store/stacks.js';
import type { StackEventRow } from '../store/schema/index.js';
import { Badge, Csrf, Field, ListTable, Time } from './layout.js';

export type StackJson = ReturnType<typeof stackJson>;
export type StackDeployJson = ReturnType<typeof stackDeployJson>;
export type PlanJson = ReturnType<typeof stackPlanJson>;

/** One stack as the API shows it (GET /api/stacks/{id}); 404 when there is none. */
export function stackJsonOf(deps: Pick<EdgeDeps, 'db' | 'sealer'>, id: number): StackJson | undefined {
  const s = getStack(deps.db, id);
  if (!s) return undefined;
  const views = stackApps(deps.db, id).map((a) => getApp(deps.db, a.id)).filter((a): a is AppView => a !== undefined);
  return stackJson(deps.sealer, s, views, listStackVars(deps.db, id), listStackDeploys(deps.db, id)[0]);
}

export const stacksJson = (deps: Pick<EdgeDeps, 'db' | 'sealer'>): StackJson[] => listStacks(deps.db).map((s) => stackJsonOf(deps, s.id)!);

/** The stack's status in one word: its open deploy's, else how many of its services serve. */
export function stackStatus(s: StackJson): string {
  const d = s.last_deploy;
  if (d && (d.status === 'pending' || d.status === 'running')) return 'deploying';
  if (s.services.length === 0) return 'empty';
  if (s.services.every((x) => x.status === 'active')) return 'active';
  if (s.services.some((x) => x.status === 'error')) return 'error';
  return 'pending';
}

const routeText = (r: StackJson['services'][number]['route']) => (!r ? null : 'domain' in r ? `https://${r.domain} -> :${r.port}` : `port ${r.published_port} -> :${r.port}`);

export const StacksTable = ({ stacks, id = 'stacks-table' }: { stacks: StackJson[]; id?: string }) => (
  <div id={id} data-live>
    <ListTable
      caption="Stacks"
      columns={['Name', 'Status', 'Services', 'Last deploy']}
      empty="No stacks yet."
      rows={stacks.map((s) => (
        <tr>
          <td>
            <a href={`/stacks/${s.id}`}>{s.name}</a>
          </td>
          <td>
            <Badge status={stackStatus(s)} />
          </td>
          <td>
            {s.services.map((x, i) => (
              <>
                {i > 0 && ', '}
                <a href={`/apps/${x.app_id}`}>{x.service}</a> <span class="muted">({x.status})</span>
              </>
            ))}
          </td>
          <td>{s.last_deploy ? <><Badge status={s.last_deploy.status} /> <Time at={s.last_deploy.created_at} /></> : <span class="muted">never</span>}</td>
        </tr>
      ))}
    />
  </div>
);

/** A stack's services: status, route, and where its logs, terminal and metrics are (its app's pages). */
export const ServicesOfStack = ({ stack, terminal }: { stack: StackJson; terminal: boolean }) => (
  <div id="stack-services" data-live>
    <ListTable
      caption="Services"
      columns={['Service', 'Status', 'Image', 'Route', 'Replicas', 'Open']}
      empty="No service runs yet."
      rows={stack.services.map((x) => (
        <tr>
          <td>
            <a href={`/apps/${x.app_id}`}>{x.service}</a> <span class="muted mono">{x.app}</span>
          </td>
          <td>
            <Badge status={x.status} /> {x.status_reason && <span class="muted">{x.status_reason}</span>}
          </td>
          <td class="mono">{x.image ?? <span class="muted">none</span>}</td>
          <td>{routeText(x.route) ?? <span class="muted">inside the stack</span>}</td>
          <td>{x.replicas}</td>
          <td class="actions">
            <a href={`/apps/${x.app_id}/logs#newest`}>Logs<span class="sr"> of {x.service}</span></a>
            {terminal && <a href={`/apps/${x.app_id}/terminal`}>Terminal<span class="sr"> of {x.service}</span></a>}
            <a href={`/apps/${x.app_id}#metrics`}>Metrics<span class="sr"> of {x.service}</span></a>
          </td>
        </tr>
      ))}
    />
  </div>
);

const ACTION_WORDS: Record<string, string> = {
  create: 'created',
  change: 'changed',
  unchanged: 'left alone (no restart)',
  remove: 'removed',
  refused: 'refused',
};

/** What a deploy of the file would do, per service; refusals name the key. */
export const PlanTable = ({ plan }: { plan: PlanJson }) => (
  <section id="stack-plan" aria-label="Plan">
    <h2>Plan</h2>
    <p class={`notice ${plan.ok ? 'info' : 'error'}`} role={plan.ok ? 'status' : 'alert'}>
      {plan.ok ? 'The file can run. Nothing is written until you create or save.' : 'The file cannot run as it is: see what is refused below.'}
    </p>
    <ListTable
      caption="Plan per service"
      columns={['Service', 'Would be', 'Changes', 'How']}
      empty="No services."
      rows={plan.services.map((s) => (
        <tr>
          <td>
            {s.service} {s.app && <span class="muted mono">{s.app}</span>}
          </td>
          <td>
            <Badge status={s.action === 'refused' ? 'failed' : s.action} /> {ACTION_WORDS[s.action]}
          </td>
          <td>
            {s.problems.length > 0 ? (
              <ul>
                {s.problems.map((p) => (
                  <li>
                    <code>{p.key}</code>: {p.message}
                  </li>
                ))}
              </ul>
            ) : s.changes.length > 0 ? (
              <span class="mono">{s.changes.join(', ')}</span>
            ) : (
              <span class="muted">-</span>
            )}
          </td>
          <td>{s.action === 'create' || s.action === 'change' ? (s.stop_first ? 'stopped first (it keeps state)' : 'new beside the old, then switched') : '-'}</td>
        </tr>
      ))}
    />
    {plan.problems.length > 0 && (
      <ul aria-label="Problems of the file">
        {plan.problems.map((p) => (
          <li>
            <code>{p.key}</code>: {p.message}
          </li>
        ))}
      </ul>
    )}
    {plan.warnings.length > 0 && (
      <ul aria-label="Warnings" class="muted">
        {plan.warnings.map((w) => (
          <li>{w}</li>
        ))}
      </ul>
    )}
  </section>
);

/** A stack deploy: its status and each step (a deploy of one service's app, linked). */
export const StackDeployView = ({ deploy }: { deploy: StackDeployJson }) => (
  <div id="stack-deploy" data-live>
    <p>
      Stack deploy #{deploy.id} ({deploy.trigger}) <Badge status={deploy.status} />
      {deploy.phase === 'rollback' && <> rolling back</>} <Time at={deploy.created_at} />
      {deploy.error && <span class="field-error"> {deploy.error}</span>}
    </p>
    <ListTable
      caption="Steps"
      columns={['Service', 'Action', 'Changes', 'Status', 'Deploy']}
      empty="Nothing changed: no service was touched."
      rows={deploy.steps.map((s) => (
        <tr>
          <td>{s.service}</td>
          <td>
            {s.action}
            {s.stop_first && <span class="muted"> (stop first)</span>}
          </td>
          <td class="mono">{s.changes.join(', ') || '-'}</td>
          <td>
            <Badge status={s.status} />
          </td>
          <td>{s.deploy_id ? <a href={`/deploys/${s.deploy_id}`}>#{s.deploy_id}</a> : <span class="muted">-</span>}</td>
        </tr>
      ))}
    />
  </div>
);

export const StackEvents = ({ events }: { events: StackEventRow[] }) => (
  <ol class="events" id="stack-events" data-live aria-label="Stack events">
    {events.length === 0 && <li class="muted">No events yet.</li>}
    {events.map((e) => (
      <li class={e.level === 'error' ? 'field-error' : undefined}>
        <Time at={e.timestamp} /> {e.service && <strong>{e.service}</strong>} {e.message}
      </li>
    ))}
  </ol>
);

export interface ComposeFormValues {
  name?: string;
  compose?: string;
  variables?: string;
  secrets?: string;
}

/** `KEY=value` per line (blank lines and `#` comments skipped) to the API's variable list. */
export function parseVariableLines(text: string | undefined, isSecret: boolean): { key: string; value: string; is_secret: boolean }[] {
  const out: { key: string; value: string; is_secret: boolean }[] = [];
  for (const raw of (text ?? '').split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const i = line.indexOf('=');
    // A line without `=` is a key with an empty value: the schema then names a bad key.
    out.push(i < 0 ? { key: line, value: '', is_secret: isSecret } : { key: line.slice(0, i).trim(), value: line.slice(i + 1), is_secret: isSecret });
  }
  return out;
}

/**
 * The Compose form: paste a file, give its variables, then "Plan" (a dry run: the plan is shown, nothing is
 * written) or, once planned, "Create stack". `action` is where it posts; `submit` the second button's label.
 */
export const ComposeForm = ({ action, csrf, v, create, planned, submit }: { action: string; csrf: string; v: ComposeFormValues; create: boolean; planned: boolean; submit: string }) => (
  <form method="post" action={action} class="stack wide">
    <Csrf token={csrf} />
    {create && <Field label="Name" name="name" value={v.name} required hint="the services become apps named <name>-<service>" />}
    <div class="field">
      <label for="f-compose">Compose file</label>
      <span class="hint" id="f-compose-hint">
        a docker-compose.yml; <code>x-svc: {'{'}domain: ..., port: N{'}'}</code> on a service routes it
      </span>
      <textarea id="f-compose" name="compose" rows={18} required aria-describedby="f-compose-hint" spellcheck={false}>
        {v.compose ?? ''}
      </textarea>
    </div>
    {create && (
      <>
        <div class="field">
          <label for="f-variables">Variables</label>
          <span class="hint" id="f-variables-hint">KEY=value, one per line: what <code>${'{'}KEY{'}'}</code> in the file becomes</span>
          <textarea id="f-variables" name="variables" rows={3} aria-describedby="f-variables-hint">{v.variables ?? ''}</textarea>
        </div>
        <div class="field">
          <label for="f-secrets">Secret variables</label>
          <span class="hint" id="f-secrets-hint">KEY=value, one per line: stored sealed, never shown again</span>
          <textarea id="f-secrets" name="secrets" rows={3} aria-describedby="f-secrets-hint">{v.secrets ?? ''}</textarea>
        </div>
      </>
    )}
    <div class="actions">
      <button type="submit" name="intent" value="plan" class={planned ? 'secondary' : undefined}>
        Plan
      </button>
      {planned && (
        <button type="submit" name="intent" value="apply">
          {submit}
        </button>
      )}
    </div>
  </form>
);
