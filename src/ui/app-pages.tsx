/** @jsxImportSource hono/jsx */
// Routes of the app pages: /apps/new, /apps/{id} and its form posts. Every write is the command the REST
// handler calls (src/desired/*), given the form as the same JSON-shaped input, so the UI is not a second
// write path: same schemas, same rules, same errors.
import { Hono, type Context } from 'hono';
import { mayUse } from '../auth/permissions.js';
import { createApp, deleteApp, updateApp } from '../desired/apps.js';
import { deployApp, rollbackApp } from '../desired/deploys.js';
import { deleteEnv, setEnv } from '../desired/env.js';
import { envKeySchema } from '../desired/fields.js';
import { createLink, deleteLink } from '../desired/links.js';
import { DomainError, notFound } from '../errors.js';
import { appJson } from '../presenters/app-json.js';
import { statusOf as httpStatus } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { publicHostname } from '../http/transport.js';
import { getApp, getAppWithDeployVersion } from '../store/apps.js';
import { activeDeploy, listDeployEvents, listDeploys, rollbackTarget } from '../store/deploys.js';
import { envKeyHistory, listEnv, missingRequired, revealEnv } from '../store/env.js';
import { listLinks } from '../store/links.js';
import { listServices } from '../store/services.js';
import { getPreviewByApp, previewsWithApps } from '../store/previews.js';
import { accessUrl } from '../presenters/app-json.js';
import { formError } from './field-errors.js';
import { AppFields, appBody, valuesOfForm, type AppFormValues } from './app-form.js';
import { recentRuns } from '../store/jobs.js';
import { deployNotice } from './outcome.js';
import { AppPage, RECENT_LOG_LINES, tabUrl, type AppTab, type AppView, type LogLines } from './app-view.js';
import { checked, defined, done, flash, int, readForm, render, text, type Form, type UiDeps, type UiEnv } from './context.js';
import { Csrf, Layout, Time } from './layout.js';
import { metricsJson } from '../metrics/query.js';
import { noteAuditNames } from '../http/audit-names.js';
import { isRange } from '../metrics/tiers.js';

/** The env key of the path; one that cannot exist is a 404, as in the API. */
function envKey(c: Context): string {
  const parsed = envKeySchema.safeParse(c.req.param('key'));
  if (!parsed.success) throw notFound('environment variable');
  return parsed.data;
}

type Status = 200 | 400 | 403 | 404 | 409 | 413 | 422 | 500;
const statusOf = (err: unknown): Status => {
  const s = httpStatus(err);
  return s === 401 || s === 429 || s === 503 ? 500 : s;
};

/** The Resources charts of `?range=` (default 1h), per replica with `?by=replica`. */
function chartsOf(deps: UiDeps, c: Context, subject: string) {
  const { db } = deps;
  const q = c.req.query('range');
  const range = isRange(q) ? q : '1h';
  const m = metricsJson(db, subject, range, deps.now().getTime(), undefined, { byReplica: c.req.query('by') === 'replica' });
  return { range, points: m.points, replicas: m.replicas };
}

/** Everything the app page shows, read through the store (the charts only for the Metrics tab). */
export function appView(deps: UiDeps, c: Context<UiEnv>, id: number, tab: AppTab, extra: Partial<AppView> = {}): AppView {
  const { db } = deps;
  const found = getAppWithDeployVersion(db, id);
  if (!found) throw notFound('app');
  const deploys = listDeploys(db, id);
  const shown = activeDeploy(db, id) ?? deploys[0];
  const links = listLinks(db, id);
  const linked = new Set(links.map((l) => l.service.id));
  const host = publicHostname(c, deps.config);
  const asPreview = getPreviewByApp(db, id);
  const parent = asPreview && getApp(db, asPreview.parentId);
  return {
    previews: previewsWithApps(db, id)
      .sort((a, b) => b.preview.prNumber - a.preview.prNumber)
      .map((p) => ({ ...p.preview, name: p.name, status: getApp(db, p.preview.appId)?.status ?? 'inactive', url: accessUrl(p, host) })),
    previewOf: parent ? { id: parent.id, name: parent.name, pr: asPreview.prNumber } : undefined,
    app: found.app,
    json: appJson(found.app, found.deployedConfigVersion, publicHostname(c, deps.config)),
    deploys,
    progress: shown && { deploy: shown, events: listDeployEvents(db, shown.id) },
    env: listEnv(db, id),
    links,
    services: listServices(db).filter((sv) => !linked.has(sv.id)),
    missingRequired: missingRequired(db, id),
    rollbackTo: rollbackTarget(db, id, found.app.currentDeployId),
    metrics: tab === 'metrics' ? chartsOf(deps, c, `app:${id}`) : undefined,
    now: deps.now(),
    runs: recentRuns(db, id),
    nowMs: deps.now().getTime(),
    may: (route) => mayUse(c.var.user, route, found.app.name),
    ...extra,
  };
}

export function appPages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;

  type PageTab = Exclude<AppTab, 'terminal'>;
  const page = (c: Context<UiEnv>, id: number, tab: PageTab, o: { error?: string; status?: Status; extra?: Partial<AppView>; logs?: LogLines } = {}) => {
    const v = appView(deps, c, id, tab, o.extra);
    // After Deploy / Rollback: the banner says what became of that deploy once it is known.
    const message = deployNotice(c.req.query('m') ?? '', v.progress?.deploy) ?? flash(c);
    return render(c, <AppPage v={v} tab={tab} logs={o.logs} csrf={c.var.csrf} user={c.var.user} message={message} error={o.error} />, o.status ?? 200);
  };

  /**
   * Runs a form action on app `id`: success redirects back to the tab of the form with a confirmation; a
   * refusal (4xx from validation or the store) shows that tab again with the reason in role="alert".
   */
  const action = (tab: PageTab, run: (c: Context<UiEnv>, id: number, form: Form) => Response | Promise<Response> | string | void) => async (c: Context<UiEnv>) => {
    const id = idParam(c, 'id', 'app');
    const form = await readForm(c, deps);
    try {
      const result = await run(c, id, form);
      if (result instanceof Response) return result;
      return done(c, tabUrl(id, tab), result || undefined);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) === 500) throw err;
      if (err.kind === 'not_found' && !getApp(db, id)) throw err;
      return page(c, id, tab, { error: formError(err), status: statusOf(err) });
    }
  };

  const newPage = (c: Context<UiEnv>, v: AppFormValues, error?: string, status: Status = 200) =>
    render(
      c,
      <Layout title="New app" csrf={c.var.csrf} user={c.var.user} error={error}>
        <form method="post" action="/apps/new" class="stack">
          <Csrf token={c.var.csrf} />
          <AppFields v={v} create />
          <div>
            <button type="submit">Create app</button>
          </div>
        </form>
      </Layout>,
      status,
    );

  r.get('/apps/new', (c) => newPage(c, {}));
  r.post('/apps/new', async (c) => {
    const form = await readForm(c, deps);
    try {
      const row = createApp(deps, appBody(form, 'create'), 'ui');
      return done(c, `/apps/${row.id}`, 'app_created');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return newPage(c, valuesOfForm(form), formError(err), statusOf(err));
    }
  });

  // The tabs: each its own URL (the Logs tab reads its lines below; the Terminal tab is terminal-page.tsx).
  r.get('/apps/:id', (c) => page(c, idParam(c, 'id', 'app'), 'overview'));
  for (const t of ['deploys', 'env', 'services', 'jobs', 'metrics', 'previews', 'settings'] as const) {
    r.get(`/apps/:id/${t}`, (c) => page(c, idParam(c, 'id', 'app'), t));
  }

  r.post('/apps/:id/deploy', action('overview', (c, id, f) => {
    deployApp(deps, id, defined({ image_ref: text(f, 'image_ref') }), 'ui');
    return 'deploy_queued';
  }));

  r.post('/apps/:id/rollback', action('overview', (c, id) => {
    rollbackApp(deps, id, 'ui');
    return 'rollback_queued';
  }));

  r.post('/apps/:id/settings', async (c) => {
    const id = idParam(c, 'id', 'app');
    const form = await readForm(c, deps);
    try {
      updateApp(deps, id, appBody(form, 'update'), 'ui');
      return done(c, tabUrl(id, 'settings'), 'app_saved');
    } catch (err) {
      if (!(err instanceof DomainError) || !getApp(db, id)) throw err;
      return page(c, id, 'settings', { error: formError(err), status: statusOf(err), extra: { settings: valuesOfForm(form) } });
    }
  });

  r.post('/apps/:id/env', action('env', (c, id, f) => {
    const input = { key: f.key ?? '', value: f.value ?? '', is_secret: checked(f, 'is_secret'), required: checked(f, 'required') };
    const { row } = setEnv(deps, id, input, 'ui', c.var.user.username);
    noteAuditNames(c, row.key);
    return 'env_saved';
  }));

  r.post('/apps/:id/env/:key/delete', action('env', (c, id) => {
    deleteEnv(deps, id, envKey(c), 'ui', c.var.user.username);
    return 'env_deleted';
  }));

  // Without JavaScript "Reveal" posts here and gets the page with that one value shown (never cached).
  r.post('/apps/:id/env/:key/reveal', action('env', (c, id) => {
    const revealed = revealEnv(db, deps.sealer, id, envKey(c));
    deps.log.info('environment variable revealed', { app_id: id, variable: revealed.key, by: c.var.user.username });
    return page(c, id, 'env', { extra: { revealed } });
  }));

  // The Logs tab: the live container's last lines at the time of the request (the script follows on live).
  r.get('/apps/:id/logs', async (c) => {
    const id = idParam(c, 'id', 'app');
    const app = getApp(db, id);
    if (!app) throw notFound('app');
    const logs: LogLines = { lines: [] };
    if (!app.liveContainerName) logs.note = 'No container of this app is live.';
    else if (!deps.runtime) logs.note = 'The container engine is not available.';
    else {
      try {
        for await (const l of deps.runtime.logs(app.liveContainerName, { follow: false, tail: RECENT_LOG_LINES })) logs.lines.push(`${l.time} ${l.line}`);
      } catch (err) {
        logs.note = `The logs could not be read: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    return page(c, id, 'logs', { logs });
  });

  r.get('/apps/:id/env/:key/history', (c) => {
    const id = idParam(c, 'id', 'app');
    const app = getApp(db, id);
    if (!app) throw notFound('app');
    const key = envKey(c);
    const rows = envKeyHistory(db, id, key);
    return render(
      c,
      <Layout title={`History of ${key}`} csrf={c.var.csrf} user={c.var.user}>
        <p>
          <a href={tabUrl(id, 'env')}>Back to {app.name}</a>
        </p>
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Change</th>
                <th scope="col">Value</th>
                <th scope="col">Flags</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((h) => (
                <tr>
                  <td>
                    <Time at={h.changedAt} />
                  </td>
                  <td>{h.action}</td>
                  <td class="mono">{h.isSecret ? <span class="muted">secret, not kept</span> : h.value}</td>
                  <td>{[h.isSecret && 'secret', h.required && 'required'].filter(Boolean).join(', ') || '-'}</td>
                  <td>{h.changedBy ?? '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Layout>,
    );
  });

  r.post('/apps/:id/links', action('services', (c, id, f) => {
    createLink(deps, id, defined({ service_id: int(f, 'service_id'), alias: text(f, 'alias') }), 'ui');
    return 'linked';
  }));

  r.post('/apps/:id/links/:sid/delete', action('services', (c, id) => {
    deleteLink(deps, id, idParam(c, 'sid', 'link'), 'ui');
    return 'unlinked';
  }));

  r.get('/apps/:id/delete', (c) => {
    const app = getApp(db, idParam(c, 'id', 'app'));
    if (!app) throw notFound('app');
    return render(
      c,
      <Layout title={`Delete app ${app.name}?`} csrf={c.var.csrf} user={c.var.user}>
        <p>
          This stops and removes its containers and route, and deletes its deploy history, environment variables and service links. It
          cannot be undone.
        </p>
        <form method="post" action={`/apps/${app.id}/delete`} class="actions">
          <Csrf token={c.var.csrf} />
          <button type="submit" class="danger">
            Delete app
          </button>
          <a href={tabUrl(app.id, 'settings')}>Cancel</a>
        </form>
      </Layout>,
    );
  });

  r.post('/apps/:id/delete', async (c) => {
    const id = idParam(c, 'id', 'app');
    await readForm(c, deps);
    deleteApp(deps, id, 'ui');
    return done(c, '/', 'app_deleted');
  });

  return r;
}
