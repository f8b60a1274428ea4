// `GET /metrics`: the Prometheus text format for those who have Grafana already (issue 22). Outside /api
// (where scrapers look) but behind the permission table like every route (`read`): a scraper sends an API
// token, `authorization: Bearer <token>` (Prometheus' `authorization.credentials`); no anonymous scrape.
import { Hono } from 'hono';
import { subjectNames } from '../store/metrics.js';
import { createPrometheus } from '../metrics/prometheus.js';
import type { ApiDeps } from './deps.js';

export function prometheusRoutes(deps: ApiDeps) {
  const r = new Hono();
  const registry = createPrometheus(() => deps.metrics?.(), () => subjectNames(deps.db));
  r.get('/metrics', async (c) => {
    c.header('content-type', registry.contentType);
    c.header('cache-control', 'no-store');
    return c.body(await registry.metrics());
  });
  return r;
}
