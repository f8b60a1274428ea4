/** @jsxImportSource hono/jsx */
// The app page, organised by task (issue 34): a header with the status and Deploy / Rollback above tabs that
// are each their own URL (Overview `/apps/{id}`, Deploys, Logs, Environment, Services, Jobs & volumes,
// Metrics, Terminal, Previews, Settings with the danger zone last). Plain links and forms: every tab works
// without JavaScript. A pure function of AppView.
import { MetricCharts, type ChartPoint, type ReplicaPoints } from './chart.js';
import type { Child } from 'hono/jsx';
import type { appJson } from '../presenters/app-json.js';
import type { LinkView } from '../store/links.js';
import type { DeployRow, EnvVarRow, JobRunRow, PreviewRow } from '../store/schema/index.js';
import type { ServiceView } from '../store/service-view.js';
import { settingsOf } from '../previews/settings.js';
import { parseJobs, parseVolumes } from '../desired/workload-fields.js';
import type { AppView as AppRecord } from '../store/app-view.js';
import { AppFields, valuesOfRow, type AppFormValues } from './app-form.js';
import { DeployHistory, EventsList, type EventRow } from './deploy-view.js';
import { Badge, Check, Csrf, Field, Layout, PostButton, Select } from './layout.js';
import type { Notice } from './outcome.js';
import { StatusLine } from './status-line.js';
import { previewSchedule } from '../jobs/preview.js';
import { commandText } from './job-form.js';
import { RunHistory } from './run-history.js';

/** How many lines the Logs tab (/apps/{id}/logs) shows as it is served. */
export const RECENT_LOG_LINES = 200;

export interface AppView {
  app: AppRecord;
  json: ReturnType<typeof appJson>;
  deploys: DeployRow[];
  /** The deploy shown under "Deploy progress": the one in flight, else the newest. */
  progress?: { deploy: DeployRow; events: EventRow[] };
  env: EnvVarRow[];
  links: LinkView[];
  /** Services not linked to this app yet (what "Link a service" offers). */
  services: ServiceView[];
  /** The newest job runs and one-off commands (issue 22). */
  runs?: JobRunRow[];
  /** Required variables without a value: a deploy is refused until they are set. */
  missingRequired: string[];
  /** What Rollback would deploy; Rollback is offered only when there is one. */
  rollbackTo?: DeployRow;
  /** A secret revealed by the no-script "Reveal" form. */
  revealed?: { key: string; value: string };
  /** What the user typed in the settings form before an error. */
  settings?: AppFormValues;
  /** Now, for the jobs' next run times. */
  nowMs?: number;
  /** The Resources charts: the range shown and its points (API.md "Metrics"). */
  metrics?: { range: string; points: ChartPoint[]; replicas?: ReplicaPoints[] };
  /** Its pull-request previews, newest pull request first (issue 20). */
  previews?: (PreviewRow & { name: string; status: string; url: string | null })[];
  /** This app is the preview of pull request `pr` of app `name`. */
  previewOf?: { id: number; name: string; pr: number };
  /** Now, for the previews' age. */
  now?: Date;
  /**
   * May the signed-in user use this route (its pattern, `POST /apps/:id/deploy`) on this app? Forms and
   * buttons the route would refuse are not offered (the route still checks: this only spares a 403).
   */
  may: (route: string) => boolean;
}

/** `3 h`, `2 d`: how long ago, coarse (the exact time is the title). */
export function age(at: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(at)) / 1000));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** The app's previews (issue 20): where each one is, its state, its commit and how old that commit is. */
const Previews = ({ v }: { v: AppView }) => {
  const s = settingsOf(v.app.previews);
  const now = v.now ?? new Date();
  return (
    <>
      <p>
        {s.enabled ? (
          <>
            On: one preview app <code>{v.app.name}-pr-N</code> per pull request to <code>{v.app.branch}</code> (at most {s.max}, removed after {s.ttl_days} days without a
            commit; services: {s.services}{s.forks ? '; forks too, without secrets' : ''}).
          </>
        ) : (
          <span class="muted">Off. Turn them on under Settings (a <code>svc_build</code> app and a code-host webhook are needed).</span>
        )}
        {' '}From a terminal: <code>svc previews {v.app.name}</code>
      </p>
      {(v.previews?.length ?? 0) > 0 && (
        <div class="scroll">
          <table aria-label="Previews">
            <thead>
              <tr><th scope="col">Pull request</th><th scope="col">Preview</th><th scope="col">State</th><th scope="col">Commit</th><th scope="col">Branch</th><th scope="col">Last commit</th></tr>
            </thead>
            <tbody>
              {v.previews!.map((p) => (
                <tr>
                  <td>#{p.prNumber}{p.fork && <span class="muted"> (fork)</span>}</td>
                  <td>
                    <a href={`/apps/${p.appId}`}>{p.name}</a>
                    {p.url && <> · <a href={p.url}>{p.url}</a></>}
                  </td>
                  <td><Badge status={p.status} /></td>
                  <td class="mono">{p.headSha.slice(0, 12)}</td>
                  <td class="mono">{p.headRef}</td>
                  <td><span title={p.lastCommitAt}>{age(p.lastCommitAt, now)} ago</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
};

export const MASK = '••••••••';
const envId = (key: string) => `env-value-${key}`;
/** A variable with no value: an empty secret is stored with no sealed value at all (src/desired/env.ts). */
export const isEmpty = (e: EnvVarRow) => (e.isSecret ? e.secretSealed === null : !e.value);

/**
 * The header of every tab: the status in words and where the app answers, beside the main actions
 * (Deploy, Rollback). `data-live`: the page's refresh keeps the status current on every tab.
 */
const Header = ({ v, csrf }: { v: AppView; csrf: string }) => (
  <div class="app-head">
    <section id="app-facts" data-live aria-label="Status">
      <p>
        <Badge status={v.app.status} /> <StatusLine app={v.json} />
        {v.json.config_changed && <span class="muted"> · configuration changed since the live deploy; deploy to apply it</span>}
      </p>
      <p class="muted">
        {v.json.access_url ? <a href={v.json.access_url}>{v.json.access_url}</a> : 'no access URL'}
        {' · '}
        <span class="mono">{v.json.image_ref ?? 'no image yet'}</span>
      </p>
    </section>
    <DeployControls v={v} csrf={csrf} />
  </div>
);

/** The Overview's facts: what runs, how much of it, and what it is. */
const Details = ({ v }: { v: AppView }) => (
  <section id="app-details" data-live aria-label="Details">
    <dl class="facts">
      <dt>Live container</dt>
      <dd class="mono">{v.app.liveContainerName ?? <span class="muted">none</span>}</dd>
      <dt>Replicas</dt>
      <dd>
        {v.app.replicas === 0 ? 'stopped (0)' : v.app.replicas}
        {' · '}
        {v.app.memoryMb === null && v.app.cpus === null ? (
          <span class="muted">no limits</span>
        ) : (
          [v.app.memoryMb !== null && `${v.app.memoryMb} MiB`, v.app.cpus !== null && `${v.app.cpus} CPU`].filter(Boolean).join(', ') + ' each'
        )}
      </dd>
      <dt>Current deploy</dt>
      <dd>{v.app.currentDeployId ? <a href={`/deploys/${v.app.currentDeployId}`}>#{v.app.currentDeployId}</a> : <span class="muted">none</span>}</dd>
      <dt>Type</dt>
      <dd>
        {v.app.appType}, {v.app.buildMode}
      </dd>
    </dl>
  </section>
);

/**
 * Volumes, the scheduled jobs with their next time and actions (the job editor is job-pages.tsx), and the
 * newest runs, each linking to its output.
 */
const Workloads = ({ v, csrf }: { v: AppView; csrf: string }) => {
  const volumes = parseVolumes(v.app.volumes);
  const jobs = parseJobs(v.app.jobs);
  const jobUrl = (name: string) => `/apps/${v.app.id}/jobs/${name}`;
  return (
    <>
      <p>
        Deploy strategy: <strong>{v.app.deployStrategy}</strong> · drain: <strong>{v.app.drainSeconds} s</strong>
        {volumes.length === 0 ? <span class="muted"> · no volumes</span> : ' · volumes: '}
        {volumes.map((vol, i) => (
          <span class="mono">{i > 0 ? ', ' : ''}{vol.name} → {vol.mount_path}</span>
        ))}
      </p>
      <h3>Scheduled jobs</h3>
      {jobs.length === 0 ? (
        <p class="muted">No scheduled jobs.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Scheduled jobs">
            <thead>
              <tr><th scope="col">Job</th><th scope="col">Schedule (UTC)</th><th scope="col">Next run</th><th scope="col">Command</th><th scope="col">Timeout</th><th scope="col">Overlap</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>
              {jobs.map((j) => {
                const next = v.nowMs === undefined ? undefined : previewSchedule(j.schedule, v.nowMs, 1);
                return (
                  <tr>
                    <td><a href={jobUrl(j.name)}>{j.name}</a></td>
                    <td class="mono">{j.schedule}</td>
                    <td>{next?.ok && next.runs[0] ? <time datetime={next.runs[0].at}>{next.runs[0].text}</time> : <span class="muted">-</span>}</td>
                    <td class="mono">{commandText(j.command)}</td>
                    <td>{j.timeout_seconds} s</td>
                    <td>{j.concurrency}</td>
                    <td class="actions">
                      {v.may('POST /apps/:id/jobs/:job/run') && <PostButton action={`${jobUrl(j.name)}/run`} csrf={csrf} label="Run now" context={j.name} tone="secondary" small />}
                      {v.may('GET /apps/:id/jobs/:job/edit') && <a href={`${jobUrl(j.name)}/edit`}>Edit<span class="sr"> {j.name}</span></a>}
                      {v.may('GET /apps/:id/jobs/:job') && <a href={jobUrl(j.name)}>History<span class="sr"> of {j.name}</span></a>}
                      {v.may('POST /apps/:id/jobs/:job/delete') && <PostButton action={`${jobUrl(j.name)}/delete`} csrf={csrf} label="Remove" context={j.name} tone="secondary" small />}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <p>
        {v.may('GET /apps/:id/add-job') && (
          <>
            <a class="button secondary" href={`/apps/${v.app.id}/add-job`}>Add a job</a>{' '}
          </>
        )}
        {v.may('POST /api/apps/:appID/run') && <span class="muted">One-off command: <code>svc run {v.app.name} -- COMMAND</code></span>}
      </p>
      {(v.runs?.length ?? 0) > 0 && v.may('GET /apps/:id/runs/:runID') && (
        <>
          <h3>Recent runs</h3>
          <RunHistory appId={v.app.id} runs={v.runs!} label="Recent runs" showJob />
        </>
      )}
    </>
  );
};

const Section = ({ title, id, children }: { title: string; id: string; children?: Child }) => (
  <section aria-labelledby={id}>
    <h2 id={id}>{title}</h2>
    {children}
  </section>
);

const DeployControls = ({ v, csrf }: { v: AppView; csrf: string }) => (
  <div class="row">
    {v.may('POST /apps/:id/deploy') && (
      <form method="post" action={`/apps/${v.app.id}/deploy`} class="row grow">
        <Csrf token={csrf} />
        <Field label="Image" name="image_ref" hint="optional: the app's image when blank" placeholder={v.json.image_ref ?? 'registry/name:tag'} autocomplete="off" />
        <button type="submit">Deploy</button>
      </form>
    )}
    {v.rollbackTo && v.may('POST /apps/:id/rollback') && (
      <PostButton action={`/apps/${v.app.id}/rollback`} csrf={csrf} label="Rollback" context={`to ${v.rollbackTo.imageRef}`} tone="secondary" />
    )}
  </div>
);

/** Said before anyone presses Deploy: which required variables would make it refuse. */
const BlockedBy = ({ v }: { v: AppView }) =>
  v.missingRequired.length > 0 ? (
    <p id="deploy-blocked" class="notice info">
      A deploy is refused until these required variables have a value:{' '}
      {v.missingRequired.map((k, i) => (
        <>
          {i > 0 && ', '}
          <code>{k}</code>
        </>
      ))}
      . Set them under <a href={tabUrl(v.app.id, 'env')}>Environment</a>.
    </p>
  ) : null;

const Progress = ({ v }: { v: AppView }) => (
  <div id="deploy-progress" data-live>
    {v.progress ? (
      <div class="panel">
        <p>
          <a href={`/deploys/${v.progress.deploy.id}`}>Deploy #{v.progress.deploy.id}</a> <Badge status={v.progress.deploy.status} deploy={v.progress.deploy.id} />{' '}
          <span class="mono">{v.progress.deploy.imageRef}</span>
          {v.progress.deploy.error && <span class="muted"> · {v.progress.deploy.error}</span>}
        </p>
        <EventsList deploy={v.progress.deploy} events={v.progress.events} label="Deploy progress" />
      </div>
    ) : (
      <p class="muted">Nothing deployed yet.</p>
    )}
  </div>
);

const EnvEditor = ({ v, csrf }: { v: AppView; csrf: string }) => (
  <>
    <div class="scroll" id="env-table">
      <table>
        <caption class="sr">Environment variables</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Value</th>
            <th scope="col">Flags</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {v.env.length === 0 && (
            <tr>
              <td colspan={4} class="muted">
                No variables.
              </td>
            </tr>
          )}
          {v.env.map((e) => {
            const shown = v.revealed?.key === e.key;
            return (
              <tr>
                <td class="mono">{e.key}</td>
                <td class="mono">
                  {isEmpty(e) ? (
                    <span id={envId(e.key)} class={e.required ? 'empty required-empty' : 'empty muted'}>
                      empty{e.required && ' · required, blocks deploys'}
                    </span>
                  ) : e.isSecret ? (
                    <span id={envId(e.key)} class={shown ? undefined : 'secret'} data-mask={MASK}>
                      {shown ? v.revealed!.value : MASK}
                    </span>
                  ) : (
                    <span id={envId(e.key)}>{e.value}</span>
                  )}
                </td>
                <td>{[e.isSecret && 'secret', e.required && 'required'].filter(Boolean).join(', ') || <span class="muted">-</span>}</td>
                <td class="actions">
                  {e.isSecret && !isEmpty(e) && v.may('POST /apps/:id/env/:key/reveal') && (
                    <form method="post" action={`/apps/${v.app.id}/env/${e.key}/reveal`} data-reveal={`/api/apps/${v.app.id}/env/${e.key}/reveal`} data-target={envId(e.key)}>
                      <Csrf token={csrf} />
                      <button type="submit" class="secondary small">
                        {shown ? 'Reveal again' : 'Reveal'}
                        <span class="sr"> {e.key}</span>
                      </button>
                    </form>
                  )}
                  <a href={`/apps/${v.app.id}/env/${e.key}/history`}>
                    History<span class="sr"> of {e.key}</span>
                  </a>
                  {v.may('POST /apps/:id/env/:key/delete') && (
                    <PostButton action={`/apps/${v.app.id}/env/${e.key}/delete`} csrf={csrf} label="Delete" context={e.key} tone="secondary" small />
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
    {v.may('POST /apps/:id/env') && (
      <>
        <h3>Add or change a variable</h3>
        <form method="post" action={`/apps/${v.app.id}/env`} class="row">
          <Csrf token={csrf} />
          <Field label="Key" name="key" required autocomplete="off" />
          <Field label="Value" name="value" autocomplete="off" />
          <Check label="Secret" name="is_secret" />
          <Check label="Required" name="required" />
          <button type="submit">Save</button>
        </form>
      </>
    )}
  </>
);

const Links = ({ v, csrf }: { v: AppView; csrf: string }) => (
  <>
    <div class="scroll">
      <table>
        <caption class="sr">Linked services</caption>
        <thead>
          <tr>
            <th scope="col">Service</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Injected variables</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {v.links.length === 0 && (
            <tr>
              <td colspan={5} class="muted">
                No linked services.
              </td>
            </tr>
          )}
          {v.links.map((l) => (
            <tr>
              <td>
                <a href={`/services/${l.service.id}`}>{l.service.name}</a>
              </td>
              <td>{l.service.type}</td>
              <td>
                <Badge status={l.service.status} />
              </td>
              <td class="mono">{l.envKeys.join(' ')}</td>
              <td>
                {v.may('POST /apps/:id/links/:sid/delete') && (
                  <PostButton action={`/apps/${v.app.id}/links/${l.service.id}/delete`} csrf={csrf} label="Unlink" context={l.service.name} tone="secondary" small />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
    {v.may('POST /apps/:id/links') && <LinkForm v={v} csrf={csrf} />}
  </>
);

const LinkForm = ({ v, csrf }: { v: AppView; csrf: string }) => (
  <>
    <h3>Link a service</h3>
    {v.services.length === 0 ? (
      <p class="muted">
        {v.links.length > 0 ? 'Every service is linked already.' : 'No services yet.'} <a href="/services">Create one</a>.
      </p>
    ) : (
      <form method="post" action={`/apps/${v.app.id}/links`} class="row">
        <Csrf token={csrf} />
        <Select label="Service" name="service_id" options={v.services.map((s) => [String(s.id), `${s.name} (${s.type})`] as const)} />
        <Field label="Alias" name="alias" hint="optional: prefix of the variables, e.g. DB" autocomplete="off" />
        <button type="submit">Link</button>
      </form>
    )}
  </>
);

/** The app page's tabs (issue 34): each its own URL under /apps/{id}, shown to whoever may open it. */
export type AppTab = 'overview' | 'deploys' | 'logs' | 'env' | 'services' | 'jobs' | 'metrics' | 'terminal' | 'previews' | 'settings';
export const APP_TABS: readonly { tab: AppTab; label: string; path: string }[] = [
  { tab: 'overview', label: 'Overview', path: '' },
  { tab: 'deploys', label: 'Deploys', path: '/deploys' },
  { tab: 'logs', label: 'Logs', path: '/logs' },
  { tab: 'env', label: 'Environment', path: '/env' },
  { tab: 'services', label: 'Services', path: '/services' },
  { tab: 'jobs', label: 'Jobs & volumes', path: '/jobs' },
  { tab: 'metrics', label: 'Metrics', path: '/metrics' },
  { tab: 'terminal', label: 'Terminal', path: '/terminal' },
  { tab: 'previews', label: 'Previews', path: '/previews' },
  { tab: 'settings', label: 'Settings', path: '/settings' },
];

/** The URL of a tab of app `id`. */
export const tabUrl = (id: number, tab: AppTab) => `/apps/${id}${APP_TABS.find((t) => t.tab === tab)!.path}`;

/** Tabs this user may open (a preview app has no previews of its own). */
const shownTabs = (v: AppView) => APP_TABS.filter((t) => (t.tab === 'previews' ? !v.previewOf : v.may(`GET /apps/:id${t.path}`)));

const Tabs = ({ v, tab }: { v: AppView; tab: AppTab }) => (
  <nav aria-label="App" class="tabs">
    <ul>
      {shownTabs(v).map((t) => (
        <li>
          <a href={`/apps/${v.app.id}${t.path}`} aria-current={t.tab === tab ? 'page' : undefined}>
            {t.label}
          </a>
        </li>
      ))}
    </ul>
  </nav>
);

/** The lines of the Logs tab, read by the route (the live container's last lines at the time of the request). */
export interface LogLines {
  lines: string[];
  note?: string;
}

const LogsTab = ({ v, logs }: { v: AppView; logs?: LogLines }) => (
  <Section title="Logs" id="h-logs">
    <p class="muted" data-logs-state role={logs?.note ? 'status' : undefined}>
      {logs?.note ?? `The last ${logs?.lines.length ?? 0} lines of ${v.app.liveContainerName}; with JavaScript new lines follow live.`} From a terminal:{' '}
      <code>svc logs {v.app.name} --follow</code>
    </p>
    <p>
      <a href={`/apps/${v.app.id}/logs#newest`}>Refresh</a> · <a href="#newest">Newest line</a>
    </p>
    {/* The whole log in the page (no inner scroll box), the newest line last with an anchor the links open at;
        the script appends what the stream sends after it (`data-tail="0"`: these lines are here already). */}
    <pre class="logs whole" role="log" aria-label="Logs" aria-live="polite" data-logs={String(v.app.id)} data-tail="0">
      {logs && logs.lines.length > 0 ? logs.lines.join('\n') + '\n' : ''}
      <span id="newest" />
    </pre>
  </Section>
);

const OverviewTab = ({ v }: { v: AppView }) => (
  <>
    <BlockedBy v={v} />
    <Details v={v} />
    <Section title="Deploy progress" id="h-deploy">
      <Progress v={v} />
    </Section>
    <Section title="Last deploys" id="h-history">
      <DeployHistory deploys={v.deploys.slice(0, OVERVIEW_DEPLOYS)} />
      {v.deploys.length > OVERVIEW_DEPLOYS && (
        <p>
          <a href={tabUrl(v.app.id, 'deploys')}>All {v.deploys.length} deploys</a>
        </p>
      )}
    </Section>
  </>
);
const OVERVIEW_DEPLOYS = 5;

const SettingsTab = ({ v, csrf }: { v: AppView; csrf: string }) => (
  <>
    <Section title="Settings" id="h-settings">
      {v.may('POST /apps/:id/settings') ? (
        <form method="post" action={`/apps/${v.app.id}/settings`} class="stack">
          <Csrf token={csrf} />
          <AppFields v={v.settings ?? valuesOfRow(v.app)} create={false} />
          <div>
            <button type="submit">Save changes</button>
          </div>
        </form>
      ) : (
        // Read only: the same fields, so the settings can be read, but nothing to submit.
        <fieldset disabled class="stack">
          <legend class="sr">Settings (read only: an administrator changes them)</legend>
          <AppFields v={valuesOfRow(v.app)} create={false} />
        </fieldset>
      )}
    </Section>
    {v.may('GET /apps/:id/delete') && (
      <Section title="Danger zone" id="h-danger">
        <form method="get" action={`/apps/${v.app.id}/delete`}>
          <button type="submit" class="danger">
            Delete app
          </button>
        </form>
      </Section>
    )}
  </>
);

/** What each tab shows below the header (the terminal tab is src/ui/terminal-page.tsx: it needs its own scripts). */
const TAB_BODY: Record<Exclude<AppTab, 'terminal'>, (v: AppView, csrf: string, logs?: LogLines) => Child> = {
  overview: (v) => <OverviewTab v={v} />,
  deploys: (v) => (
    <Section title="Deploy history" id="h-history">
      <DeployHistory deploys={v.deploys} />
    </Section>
  ),
  logs: (v, _csrf, logs) => <LogsTab v={v} logs={logs} />,
  env: (v, csrf) => (
    <Section title="Environment" id="h-env">
      <EnvEditor v={v} csrf={csrf} />
    </Section>
  ),
  services: (v, csrf) => (
    <Section title="Linked services" id="h-links">
      <Links v={v} csrf={csrf} />
    </Section>
  ),
  jobs: (v, csrf) => (
    <Section title="Volumes and jobs" id="h-jobs">
      <Workloads v={v} csrf={csrf} />
    </Section>
  ),
  metrics: (v) => (v.metrics ? <MetricCharts points={v.metrics.points} range={v.metrics.range} base={tabUrl(v.app.id, 'metrics')} perReplica replicas={v.metrics.replicas} /> : null),
  previews: (v) => (
    <Section title="Pull-request previews" id="h-previews">
      <Previews v={v} />
    </Section>
  ),
  settings: (v, csrf) => <SettingsTab v={v} csrf={csrf} />,
};

interface FrameProps {
  v: AppView;
  tab: AppTab;
  csrf: string;
  user: { username: string };
  message?: string | Notice;
  error?: string;
  head?: Child;
  refresh?: number;
  children?: Child;
}

/** Every tab's frame: the app's name, the preview note, the header with status and actions, the tabs. */
export const AppFrame = (p: FrameProps) => (
  <Layout title={`App ${p.v.app.name}`} csrf={p.csrf} user={p.user} message={p.message} error={p.error} refresh={p.refresh} head={p.head}>
    {p.v.previewOf && (
      <p>
        Preview of pull request #{p.v.previewOf.pr} of <a href={`/apps/${p.v.previewOf.id}`}>{p.v.previewOf.name}</a>: removed with the pull request.
      </p>
    )}
    <Header v={p.v} csrf={p.csrf} />
    <Tabs v={p.v} tab={p.tab} />
    {p.children}
  </Layout>
);

export const AppPage = ({ v, tab = 'overview', logs, csrf, user, message, error }: { v: AppView; tab?: Exclude<AppTab, 'terminal'>; logs?: LogLines; csrf: string; user: { username: string }; message?: string | Notice; error?: string }) => (
  <AppFrame v={v} tab={tab} csrf={csrf} user={user} message={message} error={error} refresh={5}>
    {TAB_BODY[tab](v, csrf, logs)}
  </AppFrame>
);
