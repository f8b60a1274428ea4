// `GET /metrics`: the Prometheus text format for those who have Grafana already (issue 22). Outside /api
// (where scrapers look) but behind the permission table like every route (`read`): a scraper sends an API
// token, `authorization: Bearer <token>` (Prometheus' `authorization.credentials`); no anonymous scrape.
import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import { subjectNames } from '../store/metrics.js';
import type { ApiDeps } from './deps.js';
import { operations } from './openapi/operation.js';

const op = operations('Metrics');

export function prometheusRoutes(deps: ApiDeps) {
  const r = new Hono();
  // Built at the first scrape: prom-client is ~12 MiB a daemon nobody scrapes never needs (bench:idle).
  let registry: Registry | undefined;
  r.get('/metrics', op({ summary: 'Prometheus text format (needs an API token)', media: { type: 'text/plain', description: 'Prometheus exposition format' } }), async (c) => {
    registry ??= (await import('../metrics/prometheus.js')).createPrometheus(() => deps.metrics?.(), () => subjectNames(deps.db));
    c.header('content-type', registry.contentType);
    c.header('cache-control', 'no-store');
    return c.body(await registry.metrics());
  });
  return r;
}
