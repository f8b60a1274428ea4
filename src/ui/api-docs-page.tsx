/** @jsxImportSource hono/jsx */
// `/docs/api` (issue 34): the API reference, rendered in the browser from `GET /api/openapi.json` by
// Scalar's standalone bundle, which the daemon serves itself (no CDN). Public like the document. Without
// JavaScript the page still links the document itself and docs/api.md's prose.
import { Hono } from 'hono';
import { ASSETS } from './assets.js';
import { contentSecurityPolicy } from './csp.js';
import type { UiDeps, UiEnv } from './context.js';

export function apiDocsPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  r.get('/docs/api', (c) => {
    // Scalar sets its theme with <style> elements: this page allows inline styles, like the terminal's.
    c.header('content-security-policy', contentSecurityPolicy(deps.config.codehost.webUrl, { inlineStyles: true }));
    return c.html(
      '<!doctype html>' +
        (
          <html lang="en">
            <head>
              <meta charset="utf-8" />
              <meta name="viewport" content="width=device-width, initial-scale=1" />
              <title>svc API reference</title>
            </head>
            <body>
              <p id="api-reference-loading">
                <a href="/">svc</a> · API reference. The interactive reference needs JavaScript; the document itself is{' '}
                <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1), and behaviour and guarantees are in docs/api.md.
              </p>
              <div id="api-reference" data-url="/api/openapi.json"></div>
              <script src={ASSETS.scalar.path} defer></script>
              <script src={ASSETS.apiDocs.path} defer></script>
            </body>
          </html>
        ).toString(),
    );
  });
  return r;
}
