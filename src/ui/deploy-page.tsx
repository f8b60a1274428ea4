/** @jsxImportSource hono/jsx */
// `/deploys/{id}`: a deploy's fields and its events, followed live (region "Events") while it runs.
import { Hono } from 'hono';
import { idParam } from '../http/request.js';
import { notFound } from '../errors.js';
import { getApp } from '../store/apps.js';
import { getDeploy, listDeployEvents } from '../store/deploys.js';
import { render, type UiDeps, type UiEnv } from './context.js';
import { EnvDiff, EventsList } from './deploy-view.js';
import { Badge, Layout, Time } from './layout.js';

export function deployPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  r.get('/deploys/:id', (c) => {
    const d = getDeploy(deps.db, idParam(c, 'id', 'deploy'));
    if (!d) throw notFound('deploy');
    const app = getApp(deps.db, d.appId);
    return render(
      c,
      <Layout title={`Deploy #${d.id}`} csrf={c.var.csrf} user={c.var.user} refresh={5}>
        <section id="deploy-facts" data-live aria-label="Deploy">
          <dl class="facts">
            <dt>App</dt>
            <dd>{app ? <a href={`/apps/${app.id}`}>{app.name}</a> : d.appId}</dd>
            <dt>Status</dt>
            <dd>
              <Badge status={d.status} deploy={d.id} />
              {d.step && <span class="muted"> at step {d.step}</span>}
            </dd>
            <dt>Trigger</dt>
            <dd>{d.trigger}</dd>
            <dt>Image</dt>
            <dd class="mono">{d.imageRef ?? '-'}</dd>
            <dt>Commit</dt>
            <dd class="mono">{d.commitSha ?? '-'}</dd>
            <dt>Created</dt>
            <dd>
              <Time at={d.createdAt} />
            </dd>
            <dt>Started</dt>
            <dd>
              <Time at={d.startedAt} />
            </dd>
            <dt>Completed</dt>
            <dd>
              <Time at={d.completedAt} />
            </dd>
            {d.watchUntil && (
              <>
                <dt>Watched until</dt>
                <dd>
                  <Time at={d.watchUntil} />
                </dd>
              </>
            )}
            <dt>Env changes</dt>
            <dd>
              <EnvDiff diff={d.envDiff} />
            </dd>
            {d.error && (
              <>
                <dt>Error</dt>
                <dd>{d.error}</dd>
              </>
            )}
          </dl>
        </section>
        <h2 id="h-events">Events</h2>
        <EventsList deploy={d} events={listDeployEvents(deps.db, d.id)} label="Events" />
      </Layout>,
    );
  });
  return r;
}
