// `GET /metrics`: the Prometheus text format for those who have Grafana already (issue 22). Outside /api
// (where scrapers look) but behind the same API tokens: `authorization: Bearer <token>` (Prometheus'
// `authorization.credentials`); no session cookie, no anonymous scrape.
import { Hono } from 'hono';
import { unauthenticated } from '../errors.js';
import { tokenUser } from '../store/tokens.js';
import { subjectNames } from '../store/metrics.js';
import { createPrometheus } from '../metrics/prometheus.js';
import type { ApiDeps } from './deps.js';

export function prometheusRoutes(deps: ApiDeps) {
  const r = new Hono();
  const registry = createPrometheus(() => deps.metrics?.(), () => subjectNames(deps.db));
  r.get('/metrics', async (c) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    if (!m || !tokenUser(deps.db, m[1], deps.now())) throw unauthenticated('an API token is required: authorization: Bearer <token>');
    c.header('content-type', registry.contentType);
    c.header('cache-control', 'no-store');
    return c.body(await registry.metrics());
  });
  return r;
}
