// The one middleware in front of every route, REST and UI alike (docs/api.md "Teams"): it finds the route
// the request reached, looks its rule up in THE permission table (src/auth/permissions.ts), authenticates
// (bearer token for /api, session cookie for both), applies the role, the app limits and the token's
// scopes, and after the handler writes the audit log. No rule for a route: 403 `no_rule` (fail closed).
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { decide, ruleFor, type AppRef, type Rule } from '../auth/permissions.js';
import { DomainError, forbidden, unauthenticated } from '../errors.js';
import { recordAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { getApp, getAppByName } from '../store/apps.js';
import { getDeploy } from '../store/deploys.js';
import { sessionOf } from '../store/sessions.js';
import { tokenOf } from '../store/tokens.js';
import { setupRequired, type PublicUser } from '../store/users.js';
import { mustEnrolTotp } from '../teams/settings.js';
import type { EdgeDeps } from './deps.js';
import { endpointOf, type Endpoint } from './route-match.js';
import { passesCsrf, SESSION_COOKIE } from './session.js';
import { requestAddress, requestOrigin, sentFieldNames } from './audit-trail.js';
import { auditNamesOf } from './audit-names.js';

/** What the middleware leaves in the context for handlers. */
export type AuthVars = {
  user: PublicUser;
  authVia: 'session' | 'token';
  /** The session's row id (its own entry in the session list), when authenticated by cookie. */
  sessionId?: number;
};

interface Who {
  user: PublicUser;
  via: 'session' | 'token';
  sessionId?: number;
  scopes?: string[];
}

// Machine endpoints: JSON errors (401, not a redirect to the login page), bearer tokens. The Prometheus
// scrape lives at /metrics, outside /api, where scrapers look for it.
const isApi = (path: string) => path === '/api' || path.startsWith('/api/') || path === '/metrics';

/** The bearer token of the request, undefined without an Authorization header; 401 for a malformed one. */
function bearer(c: Context): string | undefined {
  const header = c.req.header('authorization');
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthenticated('Authorization must be "Bearer <token>"');
  return m[1];
}

function authenticate(c: Context, deps: EdgeDeps, api: boolean): Who | undefined {
  const token = api ? bearer(c) : undefined;
  if (token !== undefined) {
    const found = tokenOf(deps.db, token, deps.now());
    if (!found) throw unauthenticated('invalid, expired or revoked API token');
    return { user: found.user, via: 'token', scopes: found.scopes };
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  const found = cookie ? sessionOf(deps.db, cookie, deps.now()) : undefined;
  return found ? { user: found.user, via: 'session', sessionId: found.id } : undefined;
}

/** The name of the app a rule concerns; undefined when the id names none. Through the store's own reads. */
function appNameOf(db: Db, ref: AppRef, params: Record<string, string>): string | undefined {
  const raw = params[ref.param];
  if (ref.via === 'name') return raw ? getAppByName(db, raw)?.name : undefined;
  if (!raw || !/^[1-9][0-9]{0,15}$/.test(raw)) return undefined;
  const id = Number(raw);
  const appId = ref.via === 'app' ? id : getDeploy(db, id)?.appId;
  return appId === undefined ? undefined : getApp(db, appId)?.name;
}

/** Not worth an audit line: logging in and out change no state anyone else sees. */
const NOT_AUDITED = new Set(['POST /api/auth/login', 'POST /login', 'POST /api/auth/logout', 'POST /logout']);

async function audit(c: Context, deps: EdgeDeps, route: Endpoint, rule: Rule, appName: string | undefined) {
  const key = `${route.method} ${route.path}`;
  if (NOT_AUDITED.has(key) || c.res.status >= 400) return;
  if (route.method === 'GET' && !rule.auditRead) return;
  const user = c.get('user') as PublicUser | undefined;
  // A link token in the path (an invitation) is a credential: never part of the record.
  const { key: varName, token: _secret, ...ids } = route.params;
  // The app, then the variable of the path, then what the handler noted (a variable set by its body's `key`,
  // the apps a webhook delivery deployed): who changed WHAT.
  const noted = auditNamesOf(c);
  const where = appName ?? Object.entries(ids).map(([k, v]) => `${k}=${v}`).join(' ');
  const target = [...new Set([where, varName, ...noted].filter(Boolean))].join(' ') || null;
  const fields = route.path.startsWith('/api/webhooks/') ? [] : await sentFieldNames(c);
  try {
    recordAudit(
      deps.db,
      { user_id: user?.id ?? null, username: user?.username ?? null, origin: requestOrigin(c), address: requestAddress(c), action: key, target, fields, status: c.res.status },
      deps.now(),
    );
  } catch (err) {
    // The change is done; a failed audit write must not turn it into an error answer.
    deps.log.error('audit write failed', { action: key, error: err instanceof Error ? err.message : String(err) });
  }
}

export function authorize(deps: EdgeDeps): MiddlewareHandler {
  return async (c, next) => {
    const path = c.req.path;
    const api = isApi(path);
    const route = endpointOf(c);
    const rule = route ? ruleFor(route.method, route.path) : undefined;
    if (route && rule?.action === 'public') {
      await next();
      return audit(c, deps, route, rule, undefined);
    }

    const who = authenticate(c, deps, api);
    if (!who) {
      if (api) throw unauthenticated('log in first (session cookie or bearer token required)');
      if (setupRequired(deps.db)) return c.redirect('/setup', 303);
      const back = c.req.method === 'GET' && path !== '/' ? `?next=${encodeURIComponent(path)}` : '';
      return c.redirect(`/login${back}`, 303);
    }
    if (api && who.via === 'session' && !passesCsrf(c, deps.config)) {
      throw forbidden('csrf', 'cross-site request refused: send Content-Type: application/json or a same-origin Origin header');
    }
    c.set('user', who.user);
    c.set('authVia', who.via);
    c.set('sessionId', who.sessionId);
    if (!route) return next();
    if (!rule) throw forbidden('no_rule', `no permission rule for ${route.method} ${route.path}; refused until one is added (src/auth/permissions.ts)`);

    if (rule.action !== 'self' && mustEnrolTotp(deps.db, who.user)) {
      if (!api && c.req.method === 'GET') return c.redirect('/account?m=totp_required', 303);
      throw new DomainError('forbidden', 'totp_setup_required', 'set up a second factor first (owner requires it for admins): POST /api/account/totp');
    }
    const appName = rule.app ? appNameOf(deps.db, rule.app, route.params) : undefined;
    const verdict = decide({ role: who.user.role, apps: who.user.apps, scopes: who.scopes }, rule.action, appName);
    if (!verdict.ok) throw forbidden('forbidden', verdict.reason);
    await next();
    await audit(c, deps, route, rule, appName);
  };
}
