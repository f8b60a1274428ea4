/** @jsxImportSource hono/jsx */
// `/services` (table and "Create service") and `/services/{id}` (status, "Stop", "Start", "Show
// credentials", the version and its upgrade (service-upgrade.tsx), "Delete" with "Also delete data"). Writes go through the services command the REST
// handlers call (src/desired/services.ts); credentials are fetched only when asked (script: the API endpoint; without: a POST).
import { MetricCharts } from './chart.js';
import { metricsJson } from '../metrics/query.js';
import { isRange, type Range } from '../metrics/tiers.js';
import { Hono, type Context } from 'hono';
import { DomainError, notFound } from '../errors.js';
import { serviceTypes, versionsOf } from '../catalog/catalog.js';
import { createService, deleteService, setServiceRunning } from '../desired/services.js';
import { statusOf as httpStatus } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { getService, linkedAppNames, listServices, serviceCredentials } from '../store/services.js';
import { checked, done, flash, readForm, render, type UiDeps, type UiEnv, may } from './context.js';
import { serviceNotice } from './outcome.js';
import { ServicesTable } from './dashboard.js';
import { formError } from './field-errors.js';
import { ServiceUpgradeSection } from './service-upgrade.js';
import { requestUpgradeEnd, upgradeService } from '../desired/service-upgrades.js';
import { openUpgradeOf, serviceEventsOf, upgradesOf } from '../store/service-upgrades.js';
import { Badge, Check, Csrf, Field, Layout, PostButton, Select, Time } from './layout.js';
import { serviceBackupPages, ServiceBackupsSection } from './service-backups.js';

type Status = 200 | 400 | 404 | 409 | 413;
const statusOf = (err: DomainError): Status => {
  const s = httpStatus(err);
  return s === 400 || s === 404 || s === 409 || s === 413 ? s : 400;
};

/** `?range=` when it names one, else 1h. */
const rangeOf = (c: Context): Range => {
  const q = c.req.query('range');
  return isRange(q) ? q : '1h';
};

export function servicePages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;
  const serviceOf = (c: Context) => {
    const row = getService(db, idParam(c, 'id', 'service'));
    if (!row) throw notFound('service');
    return row;
  };

  const listPage = (c: Context<UiEnv>, o: { error?: string; name?: string; type?: string; version?: string; status?: Status } = {}) =>
    render(
      c,
      <Layout title="Services" csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error} refresh={5}>
        <ServicesTable services={listServices(db)} />
        {may(c, 'POST /services') && (
          <>
            <h2 id="h-create">Create a service</h2>
            <form method="post" action="/services" class="row">
              <Csrf token={c.var.csrf} />
              <Field label="Name" name="name" value={o.name} required autocomplete="off" hint="lowercase letters, digits and -" />
              <Select label="Type" name="type" value={o.type ?? 'postgres'} options={serviceTypes.map((t) => [t, t] as const)} />
              <Field label="Version" name="version" value={o.version} autocomplete="off" hint={`empty: the newest (${serviceTypes.map((t) => `${t} ${versionsOf(t).join('/')}`).join('; ')})`} />
              <button type="submit">Create service</button>
            </form>
          </>
        )}
      </Layout>,
      o.status ?? 200,
    );

  r.get('/services', (c) => listPage(c));
  r.post('/services', async (c) => {
    const form = await readForm(c, deps);
    try {
      const version = form.version?.trim();
      const row = createService(deps, { name: form.name?.trim() ?? '', type: form.type ?? '', ...(version ? { version } : {}) }, 'ui');
      return done(c, `/services/${row.id}`, 'service_created');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return listPage(c, { error: formError(err), name: form.name, type: form.type, version: form.version, status: statusOf(err) });
    }
  });

  const detail = (c: Context<UiEnv>, o: { error?: string; status?: Status; credentials?: Record<string, unknown> } = {}) => {
    const s = serviceOf(c);
    const linked = linkedAppNames(db, s.id);
    return render(
      c,
      <Layout title={`Service ${s.name}`} csrf={c.var.csrf} user={c.var.user} message={serviceNotice(c.req.query('m') ?? '', s) ?? flash(c)} error={o.error} refresh={5}>
        <section id="service-facts" data-live aria-label="Status">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <Badge status={s.status} />
              {!s.desiredRunning && s.status !== 'stopped' && <span class="muted"> · stopping</span>}
            </dd>
            <dt>Type</dt>
            <dd>{s.type}</dd>
            <dt>Version</dt>
            <dd>{s.version}</dd>
            <dt>Image</dt>
            <dd class="mono">{s.imageRef}</dd>
            <dt>Container</dt>
            <dd class="mono">{s.containerName}</dd>
            <dt>Port</dt>
            <dd>{s.internalPort}</dd>
            <dt>Data directory</dt>
            <dd class="mono">{s.dataDir}</dd>
            <dt>Linked apps</dt>
            <dd>{linked.length ? linked.map((a, i) => <>{i > 0 && ', '}<a href={`/apps/${a.id}`}>{a.name}</a></>) : <span class="muted">none</span>}</dd>
            <dt>Created</dt>
            <dd>
              <Time at={s.createdAt} />
            </dd>
            {s.error && (
              <>
                <dt>Error</dt>
                <dd>{s.error}</dd>
              </>
            )}
          </dl>
        </section>
        {(may(c, 'POST /services/:id/stop') || may(c, 'POST /services/:id/credentials')) && (
          <div class="actions spaced">
            {may(c, 'POST /services/:id/stop') && (
              <>
                <PostButton action={`/services/${s.id}/stop`} csrf={c.var.csrf} label="Stop" tone="secondary" />
                <PostButton action={`/services/${s.id}/start`} csrf={c.var.csrf} label="Start" tone="secondary" />
              </>
            )}
            {/* Credentials are an admin's or an owner's to read (docs/api.md "Teams"): asked of their own rule. */}
            {may(c, 'POST /services/:id/credentials') && (
              <form method="post" action={`/services/${s.id}/credentials`} data-reveal={`/api/services/${s.id}/credentials`} data-credentials data-target="credentials">
                <Csrf token={c.var.csrf} />
                <button type="submit" class="secondary">
                  Show credentials
                </button>
              </form>
            )}
          </div>
        )}
        <div id="credentials" class="panel" hidden={!o.credentials} aria-live="polite">
          {o.credentials && (
            <dl class="facts">
              {Object.entries(o.credentials).map(([k, v]) => (
                <>
                  <dt>{k}</dt>
                  <dd class="mono">{String(v)}</dd>
                </>
              ))}
            </dl>
          )}
        </div>
        <ServiceUpgradeSection s={s} upgrade={openUpgradeOf(db, s.id)} last={upgradesOf(db, s.id)[0]} events={serviceEventsOf(db, s.id, 50)} csrf={c.var.csrf} mayUpgrade={may(c, 'POST /services/:id/upgrade')} />
        <ServiceBackupsSection c={c} db={db} s={s} />
        <MetricCharts points={metricsJson(db, `service:${s.id}`, rangeOf(c), deps.now().getTime(), undefined).points} range={rangeOf(c)} base={`/services/${s.id}`} />
        {may(c, 'POST /services/:id/delete') && (
          <>
            <h2 id="h-delete">Delete</h2>
            <form method="get" action={`/services/${s.id}/delete`}>
              <button type="submit" class="danger">
                Delete service
              </button>
            </form>
          </>
        )}
      </Layout>,
      o.status ?? 200,
    );
  };

  r.get('/services/:id', (c) => detail(c));
  r.route('/', serviceBackupPages(deps, detail));

  for (const [action, running] of [['stop', false], ['start', true]] as const) {
    r.post(`/services/:id/${action}`, async (c) => {
      await readForm(c, deps);
      const row = setServiceRunning(deps, idParam(c, 'id', 'service'), running, 'ui');
      return done(c, `/services/${row.id}`, running ? 'service_starting' : 'service_stopping');
    });
  }

  r.post('/services/:id/upgrade', async (c) => {
    const form = await readForm(c, deps);
    const keep = form.keep_days?.trim();
    try {
      upgradeService(deps, serviceOf(c).id, { version: form.version ?? '', ...(keep ? { keep_days: Number(keep) } : {}) }, 'ui');
      return done(c, `/services/${serviceOf(c).id}`, 'service_upgrading');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return detail(c, { error: formError(err), status: statusOf(err) });
    }
  });
  for (const what of ['revert', 'confirm'] as const) {
    r.post(`/services/:id/upgrade/${what}`, async (c) => {
      const form = await readForm(c, deps);
      // A revert drops what was written since the switch: it is ticked first, never a lone click.
      if (what === 'revert' && !checked(form, 'lose_writes')) return detail(c, { error: 'Tick that what was written since the switch is lost to revert.', status: 400 });
      try {
        requestUpgradeEnd(deps, serviceOf(c).id, what, 'ui');
        return done(c, `/services/${serviceOf(c).id}`, what === 'revert' ? 'service_reverting' : 'service_confirming');
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        return detail(c, { error: formError(err), status: statusOf(err) });
      }
    });
  }

  r.post('/services/:id/credentials', async (c) => {
    await readForm(c, deps);
    return detail(c, { credentials: serviceCredentials(deps.sealer, serviceOf(c)) });
  });

  /** Deleting a service can delete its data: it is asked first, as deleting an app is. */
  const confirmPage = (c: Context<UiEnv>, purge: boolean) => {
    const s = serviceOf(c);
    const linked = linkedAppNames(db, s.id);
    return render(
      c,
      <Layout title={`Delete service ${s.name}?`} csrf={c.var.csrf} user={c.var.user}>
        <p>
          This stops and removes its container <span class="mono">{s.containerName}</span>. Its data directory{' '}
          <span class="mono">{s.dataDir}</span> is kept unless you tick "Also delete data", which cannot be undone.
        </p>
        {linked.length > 0 && <p>It is linked to {linked.map((a) => a.name).join(', ')}: unlink it from those apps first.</p>}
        <form method="post" action={`/services/${s.id}/delete`} class="actions">
          <Csrf token={c.var.csrf} />
          <input type="hidden" name="confirm" value="yes" />
          <Check label="Also delete data" name="purge" checked={purge} />
          <button type="submit" class="danger">
            Delete service
          </button>
          <a href={`/services/${s.id}`}>Cancel</a>
        </form>
      </Layout>,
    );
  };

  r.get('/services/:id/delete', (c) => confirmPage(c, false));

  r.post('/services/:id/delete', async (c) => {
    const form = await readForm(c, deps);
    const row = serviceOf(c);
    // A post that did not come from the confirmation page (an old form, a replayed request) only asks.
    if (form.confirm !== 'yes') return confirmPage(c, checked(form, 'purge'));
    try {
      deleteService(deps, row.id, { purge: checked(form, 'purge'), force: false }, 'ui');
      return done(c, '/services', 'service_deleted');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return detail(c, { error: err.message.replace('; unlink it first or use ?force=true', '; unlink it from those apps first'), status: statusOf(err) });
    }
  });

  return r;
}
