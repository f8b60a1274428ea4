// `GET /api/audit` (docs/api.md "Audit log"): newest first, filtered by user, origin, action, target and
// time, paged with `before=<id>`.
import { Hono } from 'hono';
import { auditQueryOf } from '../http/audit-query.js';
import { listAudit } from '../store/audit.js';
import type { ApiDeps, ApiEnv } from './deps.js';

export function auditRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  r.get('/audit', (c) => c.json(listAudit(deps.db, auditQueryOf(c.req.query()))));
  return r;
}
