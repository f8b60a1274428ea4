// Code-host setup endpoints (API.md "Code host"): the manifest the /settings page posts to the platform.
// The setup callback and the debug endpoint live here too.
import { Hono, type Context } from 'hono';
import type { Config } from '../config.js';
import { startManifestFlow } from '../codehost/manifest.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { requestHost, requestScheme } from './http-context.js';

/** The URL the platform reaches svc at: SVC_PUBLIC_URL, else the scheme and host the user reached it on. */
export function publicBaseUrl(c: Context, config: Config): string {
  return config.publicUrl ?? `${requestScheme(c)}://${requestHost(c)}`;
}

export function codehostRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.get('/codehost/manifest', (c) => {
    const flow = startManifestFlow(deps.db, {
      webUrl: deps.config.codehost.webUrl,
      baseUrl: publicBaseUrl(c, deps.config),
      userId: c.get('user').id,
      now: deps.now(),
    });
    return c.json({ manifest: flow.manifest, post_url: flow.post_url });
  });

  return r;
}
