// Stack templates (docs/api.md "Stack templates"): the catalog shipped in templates/, read-only, for any
// signed-in user. GET /api/templates lists them; GET /api/templates/{name} adds the Compose file.
import { Hono } from 'hono';
import { notFound } from '../errors.js';
import { templateJson, templateSummaryJson } from '../presenters/templates.js';
import { findTemplate, listTemplates } from '../stacks/templates.js';
import type { ApiEnv } from './deps.js';

export function templateRoutes() {
  const r = new Hono<ApiEnv>();
  r.get('/templates', (c) => c.json(listTemplates().map(templateSummaryJson)));
  r.get('/templates/:name', (c) => {
    const t = findTemplate(c.req.param('name'));
    if (!t) throw notFound('template');
    return c.json(templateJson(t));
  });
  return r;
}
