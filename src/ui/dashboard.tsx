/** @jsxImportSource hono/jsx */
// The dashboard (`/`): every app with its status, access URL, live image and last deploy, and every
// service. Two queries for the deploys whatever the number of apps; statuses refresh while it is open.
import { MetricCharts } from './chart.js';
import { metricsJson } from '../metrics/query.js';
import { isRange } from '../metrics/tiers.js';
import { Hono } from 'hono';
import { accessUrl } from '../presenters/app-json.js';
import { publicHostname } from '../http/transport.js';
import { listAppsWithDeployVersion } from '../store/apps.js';
import { deployImages, newestDeployByApp } from '../store/overview.js';
import { listServices } from '../store/services.js';
import type { DeployRow } from '../store/schema/index.js';
import type { ServiceView } from '../store/service-view.js';
import type { AppView } from '../store/app-view.js';
import { flash, render, type UiDeps, type UiEnv, may } from './context.js';
import { Badge, Layout, Time } from './layout.js';
import { StatusLine, statusFactsOf } from './status-line.js';
import { StacksTable, stacksJson } from './stack-view.js';

export interface DashboardApp {
  app: AppView;
  url: string | null;
  liveImage: string | null;
  last: DeployRow | undefined;
}

export const AppsTable = ({ apps }: { apps: DashboardApp[] }) => (
  <div class="scroll" id="apps-table" data-live>
    <table>
      <caption class="sr">Apps</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
          <th scope="col">Access URL</th>
          <th scope="col">Live image</th>
          <th scope="col">Last deploy</th>
        </tr>
      </thead>
      <tbody>
        {apps.length === 0 && (
          <tr>
            <td colspan={5} class="muted">
              No apps yet.
            </td>
          </tr>
        )}
        {apps.map(({ app, url, liveImage, last }) => (
          <tr>
            <td>
              <a href={`/apps/${app.id}`}>{app.name}</a>
            </td>
            <td>
              <Badge status={app.status} /> <StatusLine app={statusFactsOf(app)} />
            </td>
            <td>{url ? <a href={url}>{url}</a> : <span class="muted">-</span>}</td>
            <td class="mono">{liveImage ?? <span class="muted">none</span>}</td>
            <td>
              {last ? (
                <>
                  <a href={`/deploys/${last.id}`}>#{last.id}</a> <Badge status={last.status} deploy={last.id} /> <Time at={last.createdAt} />
                </>
              ) : (
                <span class="muted">never</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

export const ServicesTable = ({ services, id = 'services-table' }: { services: ServiceView[]; id?: string }) => (
  <div class="scroll" id={id} data-live>
    <table>
      <caption class="sr">Services</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Type</th>
          <th scope="col">Version</th>
          <th scope="col">Status</th>
          <th scope="col">Container</th>
        </tr>
      </thead>
      <tbody>
        {services.length === 0 && (
          <tr>
            <td colspan={5} class="muted">
              No services yet.
            </td>
          </tr>
        )}
        {services.map((s) => (
          <tr>
            <td>
              <a href={`/services/${s.id}`}>{s.name}</a>
            </td>
            <td>{s.type}</td>
            <td>{s.version}</td>
            <td>
              <Badge status={s.status} />
            </td>
            <td class="mono">{s.containerName}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

/**
 * The dashboard's data: apps newest first with their derived columns. A stack's service apps are not listed
 * here: they are shown under their stack (the Stacks table, and each stack's page).
 */
export function dashboardApps(deps: UiDeps, hostname: string): DashboardApp[] {
  const rows = listAppsWithDeployVersion(deps.db).filter((r) => r.app.stackId === null);
  const newest = newestDeployByApp(deps.db);
  const images = deployImages(deps.db, rows.flatMap((r) => (r.app.currentDeployId ? [r.app.currentDeployId] : [])));
  return rows.map(({ app }) => ({
    app,
    url: accessUrl(app, hostname),
    liveImage: app.currentDeployId ? (images.get(app.currentDeployId) ?? null) : null,
    last: newest.get(app.id),
  }));
}

export function dashboardPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  r.get('/', (c) => {
    const apps = dashboardApps(deps, publicHostname(c, deps.config));
    const stacks = stacksJson(deps);
    const q = c.req.query('range');
    const range = isRange(q) ? q : '1h';
    return render(
      c,
      <Layout title="Apps" csrf={c.var.csrf} user={c.var.user} message={flash(c)} refresh={5}>
        <p class="actions">
          {may(c, 'GET /apps/new') && (
            <a class="button" href="/apps/new">
              New app
            </a>
          )}
          {may(c, 'POST /services') && (
            <a class="button secondary" href="/services">
              New service
            </a>
          )}
        </p>
        <AppsTable apps={apps} />
        {stacks.length > 0 && (
          <>
            <h2>Stacks</h2>
            <StacksTable stacks={stacks} id="dashboard-stacks" />
          </>
        )}
        <h2>Services</h2>
        <ServicesTable services={listServices(deps.db)} />
        <MetricCharts points={metricsJson(deps.db, 'host', range, deps.now().getTime(), undefined).points} range={range} base="/" host />
      </Layout>,
    );
  });
  return r;
}
