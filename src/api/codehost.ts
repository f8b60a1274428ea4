// Code-host setup endpoints (API.md "Code host"): the manifest the /settings page posts to the platform,
// the setup callback (the session checked here, the exchange of the platform's code for the app's
// credentials is the command in desired/codehost.ts), and the debug endpoint.
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { notFound } from '../errors.js';
import { startManifestFlow } from '../codehost/manifest.js';
import { createCodehostClient, type CodehostClient } from '../codehost/client.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import { codehostDiagnosis } from '../codehost/debug.js';
import { completeCodehostSetup } from '../desired/codehost.js';
import { sessionUser } from '../store/sessions.js';
import { SESSION_COOKIE } from '../http/session.js';
import { publicBaseUrl } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { z } from 'zod';
import { operations } from './openapi/operation.js';

const op = operations('Code host');

/** The GitHub App manifest svc posts to the platform (codehost/manifest.ts codehostManifest): GitHub's format. */
const manifestJsonSchema = z.object({
  name: z.string(),
  url: z.string(),
  hook_attributes: z.object({ url: z.string(), active: z.boolean() }),
  redirect_url: z.string(),
  callback_urls: z.array(z.string()),
  public: z.boolean(),
  request_oauth_on_install: z.boolean(),
  setup_on_update: z.boolean(),
  default_permissions: z.record(z.string(), z.string()),
  default_events: z.array(z.string()),
});
/** codehost/debug.ts Diagnosis: errors as text, never a secret. */
const diagnosisJsonSchema = z
  .object({
    app_configured: z.boolean(),
    private_key_readable: z.boolean(),
    installations: z.number().int(),
    repositories: z.array(z.object({ installation_id: z.number().int(), ok: z.boolean(), count: z.number().int(), error: z.string().nullable() })),
    error: z.string().optional(),
  })
  .meta({ id: 'CodehostDiagnosis' });

export function codehostRoutes(deps: ApiDeps & { codehost: CredentialsHolder; codehostClient?: CodehostClient }) {
  const r = new Hono<ApiEnv>();
  const client = deps.codehostClient ?? createCodehostClient({ apiUrl: deps.config.codehost.apiUrl, creds: deps.codehost });

  r.get('/codehost/manifest', op({ summary: 'Start registering the GitHub App (the manifest to post)', response: z.object({ manifest: manifestJsonSchema, post_url: z.string() }) }), (c) => {
    const flow = startManifestFlow(deps.db, {
      webUrl: deps.config.codehost.webUrl,
      baseUrl: publicBaseUrl(c, deps.config),
      userId: c.get('user').id,
      now: deps.now(),
    });
    return c.json({ manifest: flow.manifest, post_url: flow.post_url });
  });

  // Public in the auth wall (the platform redirects the browser here), so the session is checked here.
  r.get('/codehost/setup-callback', op({ summary: "The code host's redirect after the app is created (a browser's, with its session)", query: { code: 'from the code host', state: 'from the manifest flow' }, status: 302, media: { type: 'text/plain', description: 'A redirect to /settings (or /login first)' }, errors: { 400: 'invalid_request: an unknown, used or expired state, or another user\'s' } }), async (c) => {
    const cookie = getCookie(c, SESSION_COOKIE);
    const user = cookie ? sessionUser(deps.db, cookie, deps.now()) : undefined;
    // A browser without the session (expired, other browser) logs in first; the state stays unused.
    if (!user) return c.redirect('/login?next=' + encodeURIComponent(c.req.url.replace(/^https?:\/\/[^/]+/, '')), 302);
    const outcome = await completeCodehostSetup(deps, { codehost: deps.codehost, client }, user.id, {
      code: c.req.query('code') ?? '',
      state: c.req.query('state') ?? '',
    });
    if (!outcome.registered) return c.redirect('/settings?codehost_error=' + encodeURIComponent(outcome.error), 302);
    return c.redirect('/settings?codehost=created', 302);
  });

  r.get('/codehost/debug', op({ summary: 'What svc sees of the code host (debug endpoints only)', response: diagnosisJsonSchema, errors: { 404: 'not_found: SVC_DEBUG_ENDPOINTS is not true' } }), async (c) => {
    if (!deps.config.debugEndpoints) throw notFound('route');
    return c.json(await codehostDiagnosis(deps.codehost, client));
  });

  return r;
}
