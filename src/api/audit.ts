// `GET /api/audit` (docs/api.md "Audit log"): newest first, filtered by user, origin, action, target and
// time, paged with `before=<id>`.
import { Hono } from 'hono';
import { auditQueryOf } from '../http/audit-query.js';
import { listAudit } from '../store/audit.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { auditJsonSchema } from '../presenters/account-json.js';

const op = operations('Audit');

export function auditRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  r.get('/audit', op({ summary: 'The audit log, newest first', query: { user: 'a username', origin: 'api, ui, cli, ...', action: 'METHOD /path pattern', target: 'app or record', since: 'ISO time', until: 'ISO time', before: 'an id: the page after it', limit: 'at most this many' }, response: z.array(auditJsonSchema), errors: { 400: 'invalid_request: a malformed filter' } }), (c) => c.json(listAudit(deps.db, auditQueryOf(c.req.query()))));
  return r;
}
