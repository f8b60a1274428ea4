// Metrics endpoints (API.md "Metrics"): reads of what the collector observed, never a call to the engine.
// GET /api/apps/{id}/metrics, /api/services/{id}/metrics, /api/host/metrics (?range=1h|24h|7d, default 1h),
// and /api/metrics/top (the last round of everything, for `svc top`).
import { Hono, type Context } from 'hono';
import { invalid, notFound } from '../errors.js';
import { idParam } from '../http/request.js';
import { getApp } from '../store/apps.js';
import { getService } from '../store/services.js';
import { subjectNames } from '../store/metrics.js';
import { metricsJson, valuesJson } from '../metrics/query.js';
import { isRange, type Range } from '../metrics/tiers.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { z } from 'zod';
import { operations } from './openapi/operation.js';
import { appMetricsJsonSchema, hostMetricsJsonSchema, metricsTopJsonSchema, serviceMetricsJsonSchema } from '../presenters/metrics.js';

const op = operations('Metrics');

function rangeOf(c: Context): Range {
  const r = c.req.query('range') ?? '1h';
  if (!isRange(r)) throw invalid('range must be 1h, 24h or 7d', { field: 'range' });
  return r;
}

/** `?by=replica`: an app's points per replica as well (the only other value is none). */
function byOf(c: Context): boolean {
  const by = c.req.query('by');
  if (by !== undefined && by !== 'replica') throw invalid('by must be replica', { field: 'by' });
  return by === 'replica';
}

export function metricRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const answer = (c: Context, subject: string, extra: Record<string, unknown>, byReplica = false) =>
    c.json({ ...extra, ...metricsJson(db, subject, rangeOf(c), deps.now().getTime(), deps.metrics?.(), { byReplica }) });

  r.get('/apps/:id/metrics', op({ summary: "An app's CPU, memory, network figures", query: { range: '1h (default), 24h or 7d', by: 'replica: points per replica as well' }, response: appMetricsJsonSchema, errors: { 400: 'invalid_request: a bad range or by' } }), (c) => {
    const app = getApp(db, idParam(c, 'id', 'app'));
    if (!app) throw notFound('app');
    return answer(c, `app:${app.id}`, { app: app.name }, byOf(c));
  });
  r.get('/services/:id/metrics', op({ summary: "A service's figures", query: { range: '1h (default), 24h or 7d' }, response: serviceMetricsJsonSchema, errors: { 400: 'invalid_request: a bad range' } }), (c) => {
    const service = getService(db, idParam(c, 'id', 'service'));
    if (!service) throw notFound('service');
    return answer(c, `service:${service.id}`, { service: service.name });
  });
  r.get('/host/metrics', op({ summary: "The host's figures", query: { range: '1h (default), 24h or 7d' }, response: hostMetricsJsonSchema, errors: { 400: 'invalid_request: a bad range' } }), (c) => answer(c, 'host', {}));

  r.get('/metrics/top', op({ summary: 'The last round of every subject (for svc top)', response: metricsTopJsonSchema }), (c) => {
    const snap = deps.metrics?.();
    const names = subjectNames(db);
    const rows = [...(snap?.subjects ?? [])].flatMap(([subject, v]) => {
      const n = names.get(subject);
      return n ? [{ kind: n.kind, name: n.name, ...valuesJson(v), containers: (snap?.containers ?? []).filter((x) => x.subject === subject).map((x) => ({ name: x.name, ...valuesJson(x.values) })) }] : [];
    });
    const host = snap?.subjects.get('host');
    return c.json({
      time: snap ? new Date(snap.atMs).toISOString().replace(/\.\d{3}Z$/, 'Z') : null,
      host: host ? valuesJson(host, true) : null,
      subjects: rows.sort((a, b) => (b.cpu_cores ?? 0) - (a.cpu_cores ?? 0) || a.name.localeCompare(b.name)),
    });
  });
  return r;
}
