// Code-host setup endpoints (API.md "Code host"): the manifest the /settings page posts to the platform,
// the setup callback that exchanges the platform's code for the app's credentials (written to `.env` and
// the key file, then live at once), and the debug endpoint. Secrets never appear in an answer or a log.
import { join } from 'node:path';
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { invalid, notFound } from '../errors.js';
import { startManifestFlow } from '../codehost/manifest.js';
import { createCodehostClient, type CodehostClient } from '../codehost/client.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import { updateEnvFile, writePrivateFile } from '../codehost/env-file.js';
import { codehostDiagnosis } from '../codehost/debug.js';
import { takeManifestState } from '../store/codehost.js';
import { sessionUser } from '../store/sessions.js';
import { SESSION_COOKIE } from '../http/session.js';
import { publicBaseUrl } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';

export const KEY_FILE = 'codehost-app.pem';

const TOKEN = /^[A-Za-z0-9_-]{1,200}$/;

export function codehostRoutes(deps: ApiDeps & { codehost: CredentialsHolder; codehostClient?: CodehostClient }) {
  const r = new Hono<ApiEnv>();
  const client = deps.codehostClient ?? createCodehostClient({ apiUrl: deps.config.codehost.apiUrl, creds: deps.codehost });

  r.get('/codehost/manifest', (c) => {
    const flow = startManifestFlow(deps.db, {
      webUrl: deps.config.codehost.webUrl,
      baseUrl: publicBaseUrl(c, deps.config),
      userId: c.get('user').id,
      now: deps.now(),
    });
    return c.json({ manifest: flow.manifest, post_url: flow.post_url });
  });

  // Public in the auth wall (the platform redirects the browser here), so the session is checked here.
  r.get('/codehost/setup-callback', async (c) => {
    const cookie = getCookie(c, SESSION_COOKIE);
    const user = cookie ? sessionUser(deps.db, cookie, deps.now()) : undefined;
    // A browser without the session (expired, other browser) logs in first; the state stays unused.
    if (!user) return c.redirect('/login?next=' + encodeURIComponent(c.req.url.replace(/^https?:\/\/[^/]+/, '')), 302);
    const code = c.req.query('code') ?? '';
    const state = c.req.query('state') ?? '';
    if (!TOKEN.test(state) || !takeManifestState(deps.db, state, user.id, deps.now())) {
      throw invalid('unknown, used or expired setup state: start the setup again from /settings', undefined, 'invalid_state');
    }
    if (!TOKEN.test(code)) return c.redirect('/settings?codehost_error=' + encodeURIComponent('the platform sent no valid code'), 302);
    let conv;
    try {
      conv = await client.convertManifest(code);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      deps.log.warn('code-host app conversion failed', { error: why });
      return c.redirect('/settings?codehost_error=' + encodeURIComponent(`the code exchange failed: ${why}`), 302);
    }
    const keyPath = join(deps.config.dataDir, KEY_FILE);
    writePrivateFile(keyPath, conv.pem);
    updateEnvFile(deps.config.envFile, {
      SVC_CODEHOST_APP_ID: conv.id,
      SVC_CODEHOST_APP_SLUG: conv.slug,
      SVC_CODEHOST_APP_CLIENT_ID: conv.client_id,
      SVC_CODEHOST_APP_CLIENT_SECRET: conv.client_secret,
      SVC_CODEHOST_WEBHOOK_SECRET: conv.webhook_secret,
      SVC_CODEHOST_APP_PRIVATE_KEY: keyPath,
    });
    deps.codehost.set({
      appId: conv.id,
      appSlug: conv.slug,
      clientId: conv.client_id,
      clientSecret: conv.client_secret,
      webhookSecret: conv.webhook_secret,
      privateKeyPath: keyPath,
    });
    deps.log.info('code-host app registered', { app_id: conv.id, slug: conv.slug });
    return c.redirect('/settings?codehost=created', 302);
  });

  r.get('/codehost/debug', async (c) => {
    if (!deps.config.debugEndpoints) throw notFound('route');
    return c.json(await codehostDiagnosis(deps.codehost, client));
  });

  return r;
}
