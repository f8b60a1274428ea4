/** @jsxImportSource hono/jsx */
// The web UI as one hono sub-app mounted at `/` beside the API (API.md "Web UI"). Pages are rendered on
// the server and call the same commands (src/desired/) as the REST handlers. Without a session
// every page redirects to /login, or to /setup while no user exists; every form POST needs its CSRF token.
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AuthFlows } from '../http/auth-flows.js';
import { DomainError, tooLarge } from '../errors.js';
import type { EdgeDeps } from '../http/deps.js';
import { statusOf } from '../http/errors.js';
import { assetRoutes } from './assets.js';
import { apiDocsPage } from './api-docs-page.js';
import { authPages } from './auth-pages.js';
import { render, type UiDeps, type UiEnv } from './context.js';
import { createCsrf } from './csrf.js';
import { dashboardPage } from './dashboard.js';
import { appPages } from './app-pages.js';
import { deployPage } from './deploy-page.js';
import { servicePages } from './service-pages.js';
import { settingsPage } from './settings-page.js';
import { nodesPage } from './nodes-page.js';
import { backupPages } from './backup-pages.js';
import { accountPage } from './account-page.js';
import { usersPage } from './users-page.js';
import { auditPage } from './audit-page.js';
import { invitePage } from './invite-page.js';
import { notifyPage } from './notify-page.js';
import { registriesPage } from './registries-page.js';
import { backupTargetPages } from './backup-target-pages.js';
import { Layout } from './layout.js';
import { terminalPage } from './terminal-page.js';
import { jobPages } from './job-pages.js';
import { stackPages } from './stack-pages.js';
import { contentSecurityPolicy } from './csp.js';

/** Paths the UI never answers: the API (its own JSON 404s and auth) and the health check. */
const notUi = (path: string) => path.startsWith('/api/') || path === '/api' || path === '/healthz' || path === '/metrics' || path.startsWith('/assets/');

/** Security headers of every page: scripts and styles only from us, no framing, forms only to us and the code host. */
function pageHeaders(c: Context, codehostWebUrl: string) {
  c.header('content-security-policy', contentSecurityPolicy(codehostWebUrl));
  c.header('x-content-type-options', 'nosniff');
  c.header('referrer-policy', 'same-origin');
}

/** An error page for what a page route threw (a 404 id, a CSRF refusal, an unexpected fault). */
export function errorPage(c: Context<UiEnv>, err: unknown, log: EdgeDeps['log']) {
  const known = err instanceof DomainError;
  if (!known) log.error('ui page failed', { path: c.req.path, error: err instanceof Error ? err.message : String(err) });
  const status = statusOf(err);
  const title = status === 404 ? 'Not found' : status === 403 ? 'Refused' : 'Something went wrong';
  return render(
    c,
    <Layout title={title} csrf={c.var.csrf ?? ''} user={c.var.user} error={known ? err.message : 'an internal error occurred; the log has details'}>
      <p>
        <a href="/">Back to the dashboard</a>
      </p>
    </Layout>,
    status,
  );
}

/** `flows`: setup and login, shared with the API (one login limiter per daemon). */
export function createUi(deps: EdgeDeps, flows: AuthFlows) {
  const ui: UiDeps = { ...deps, flows, csrf: createCsrf(deps.config) };
  const r = new Hono<UiEnv>();
  r.onError((err, c) => errorPage(c, err, deps.log));
  r.route('/', assetRoutes());

  r.use('*', async (c, next) => {
    if (notUi(c.req.path)) return next();
    pageHeaders(c, deps.config.codehost.webUrl);
    c.set('csrf', ui.csrf.token(c));
    if (c.req.method === 'POST') {
      await bodyLimit({ maxSize: 1024 * 1024, onError: () => { throw tooLarge('the form is too large'); } })(c, async () => {});
    }
    // Login, the permission check and the audit trail happened before this, in src/http/authorize.ts.
    return next();
  });

  r.route('/', authPages(ui));
  r.route('/', dashboardPage(ui));
  r.route('/', appPages(ui));
  r.route('/', jobPages(ui));
  r.route('/', deployPage(ui));
  r.route('/', stackPages(ui));
  r.route('/', servicePages(ui));
  r.route('/', settingsPage(ui));
  r.route('/', backupTargetPages(ui));
  r.route('/', backupPages(ui));
  r.route('/', nodesPage(ui));
  r.route('/', accountPage(ui));
  r.route('/', usersPage(ui));
  r.route('/', auditPage(ui));
  r.route('/', invitePage(ui));
  r.route('/', terminalPage(ui));
  r.route('/', notifyPage(ui));
  r.route('/', registriesPage(ui));
  r.route('/', apiDocsPage(ui));
  return r;
}

/** The UI's 404 for paths no route serves (the API keeps its JSON 404 under /api/). */
export const uiNotFound = (c: Context) =>
  render(
    c,
    <Layout title="Not found" csrf="">
      <p>
        There is no page at this address. <a href="/">Go to the dashboard</a>.
      </p>
    </Layout>,
    404,
  );
