// `GET /api/openapi.json` (public, like /api/auth/status): the OpenAPI 3.1 document of this daemon's API,
// built from the routes of `api` the first time it is asked for and kept (routes do not change while the
// daemon runs). The reference page that renders it is the UI's (/docs/api, src/ui/api-docs-page.tsx).
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { z } from 'zod';
import { buildOpenApiDocument } from './document.js';
import { operations } from './operation.js';

const op = operations('Reference');
/** package.json is three levels up from src/api/openapi/ and from dist/api/openapi/ alike. */
const version = (): string => (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export function openApiRoutes(api: Hono<any>) {
  const r = new Hono();
  let text: Promise<string> | undefined;
  r.get(
    '/openapi.json',
    op({ summary: 'This OpenAPI 3.1 document', response: z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }) }),
    async (c) => {
      text ??= buildOpenApiDocument(api, version()).then((d) => JSON.stringify(d));
      return c.body(await text, 200, { 'content-type': 'application/json' });
    },
  );
  return r;
}
