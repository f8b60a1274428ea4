// THE permission table (docs/api.md "Teams"): what each role and each token scope may do, and which action
// every REST endpoint and every UI route is. One middleware (src/http/authorize.ts) applies it to every
// request; no handler checks a role. A route missing from RULES is refused (403 `no_rule`), and the
// table-driven test (test/unit/teams/permissions.test.ts) fails for it: add its line here.

import type { Role } from '../store/schema/users.js';
export { ROLES, type Role } from '../store/schema/users.js';

/**
 * public: no login. self: one's own account (password, second factor, sessions, tokens).
 * read: everything but secret values and credentials. deploy_status: a deploy's status and events.
 * logs, deploy (deploy, roll back), configure (variables, links): per app. reveal (an app's secret
 * values): admins and owners only, like credentials.
 * manage: apps, services and their credentials, backups, manifests, settings. users: accounts, invitations.
 * owner: what only an owner does (require a second factor).
 */
export const ACTIONS = ['public', 'self', 'read', 'deploy_status', 'logs', 'reveal', 'deploy', 'configure', 'manage', 'users', 'owner'] as const;
export type Action = (typeof ACTIONS)[number];

/** Actions that name one app: a developer limited to some apps, or a `deploy:<app>` token, gets them there only. */
export const APP_ACTIONS: ReadonlySet<Action> = new Set(['logs', 'reveal', 'deploy', 'configure']);

const VIEWER: Action[] = ['self', 'read', 'deploy_status'];
// A developer deploys and sets variables (a secret too: replaced, never read back) but reveals no secret
// value and no service credential (issue 35: "a teammate who deploys but cannot read production secrets").
const DEVELOPER: Action[] = [...VIEWER, 'logs', 'deploy', 'configure'];
const ADMIN: Action[] = [...DEVELOPER, 'reveal', 'manage', 'users'];
export const ROLE_ACTIONS: Record<Role, ReadonlySet<Action>> = {
  viewer: new Set(VIEWER),
  developer: new Set(DEVELOPER),
  admin: new Set(ADMIN),
  owner: new Set([...ADMIN, 'owner']),
};

/** How a rule finds the app it concerns: a path parameter holding an app id, a deploy id, or the app's name. */
export type AppRef = { param: string; via: 'app' | 'deploy' | 'name' };

export interface Rule {
  action: Action;
  app?: AppRef;
  /** Record successful calls in the audit log even though they are reads (reveals, archive downloads). */
  auditRead?: boolean;
}

const app = (param: string): AppRef => ({ param, via: 'app' });
const deploy = (param: string): AppRef => ({ param, via: 'deploy' });
const named = (param: string): AppRef => ({ param, via: 'name' });
const r = (action: Action, extra: Omit<Rule, 'action'> = {}): Rule => ({ action, ...extra });

/** `METHOD /path` exactly as the route is registered (hono pattern), to its rule. */
export const RULES: Record<string, Rule> = {
  // Public: first run, login, invitations, signed webhooks, the code-host callback, health, static assets.
  'GET /healthz': r('public'),
  'GET /api/auth/status': r('public'),
  // The OpenAPI document and its reference page (issue 34): what a client generator or a gateway reads.
  'GET /api/openapi.json': r('public'),
  'GET /docs/api': r('public'),
  'POST /api/auth/setup': r('public'),
  'POST /api/auth/login': r('public'),
  'POST /api/invitations/accept': r('public'),
  'GET /api/codehost/setup-callback': r('public'),
  'POST /api/webhooks/codehost': r('public'),
  'POST /api/webhooks/github': r('public'),
  // Authenticated by their own proof (HMAC signature or token), checked by the route before anything is read.
  'POST /api/webhooks/gitlab': r('public'),
  'POST /api/webhooks/gitea': r('public'),
  'POST /api/webhooks/forgejo': r('public'),

  // One's own account.
  'POST /api/auth/logout': r('self'),
  'GET /api/auth/me': r('self'),
  'GET /api/tokens': r('self'),
  'POST /api/tokens': r('self'),
  'DELETE /api/tokens/:id': r('self'),
  'POST /api/account/password': r('self'),
  'GET /api/account/sessions': r('self'),
  'DELETE /api/account/sessions/:id': r('self'),
  'POST /api/account/totp': r('self'),
  'POST /api/account/totp/confirm': r('self'),
  'DELETE /api/account/totp': r('self'),

  // Apps.
  'GET /api/apps': r('read'),
  'POST /api/apps': r('manage'),
  'GET /api/app-names/:name': r('deploy_status', { app: named('name') }),
  'GET /api/apps/:appID': r('read'),
  'PUT /api/apps/:appID': r('manage'),
  'DELETE /api/apps/:appID': r('manage'),
  'GET /api/apps/:appID/events': r('read'),
  'GET /api/apps/:appID/previews': r('read'),
  'GET /api/apps/:appID/env': r('read'),
  'POST /api/apps/:appID/env': r('configure', { app: app('appID') }),
  'DELETE /api/apps/:appID/env/:key': r('configure', { app: app('appID') }),
  'GET /api/apps/:appID/env/:key/history': r('read'),
  'GET /api/apps/:appID/env/:key/reveal': r('reveal', { app: app('appID'), auditRead: true }),
  'POST /api/apps/:appID/deploys': r('deploy', { app: app('appID') }),
  'POST /api/apps/:appID/deploys/rollback': r('deploy', { app: app('appID') }),
  'GET /api/apps/:appID/deploys': r('deploy_status', { app: app('appID') }),
  'GET /api/deploys/:deployID': r('deploy_status', { app: deploy('deployID') }),
  'GET /api/deploys/:deployID/events': r('deploy_status', { app: deploy('deployID') }),
  'GET /api/deploys/:deployID/events/stream': r('deploy_status', { app: deploy('deployID') }),
  'GET /api/apps/:appID/logs/stream': r('logs', { app: app('appID') }),
  'POST /api/apps/:appID/services': r('configure', { app: app('appID') }),
  'GET /api/apps/:appID/services': r('read'),
  'DELETE /api/apps/:appID/services/:serviceID': r('configure', { app: app('appID') }),

  // Stacks (issue 32): a stack is made and changed like an app (manage); deploying one is a deploy of its
  // service apps, which a developer may do for all of them only (no per-app grant covers a whole stack).
  'GET /api/stacks': r('read'),
  'POST /api/stacks': r('manage'),
  'GET /api/stacks/:stackID': r('read'),
  'PUT /api/stacks/:stackID': r('manage'),
  'DELETE /api/stacks/:stackID': r('manage'),
  'POST /api/stacks/:stackID/deploys': r('deploy'),
  'POST /api/stacks/:stackID/deploys/rollback': r('deploy'),
  'GET /api/stacks/:stackID/deploys': r('deploy_status'),
  'GET /api/stacks/:stackID/deploys/:deployID': r('deploy_status'),
  'GET /api/stacks/:stackID/events': r('read'),
  'GET /api/stacks/:stackID/variables/:key/reveal': r('reveal', { auditRead: true }),
  'GET /api/stacks/:stackID/services/:service/logs/stream': r('logs'),

  // Services, backups, manifests, code host.
  'GET /api/services': r('read'),
  'POST /api/services': r('manage'),
  'GET /api/services/:id': r('read'),
  'DELETE /api/services/:id': r('manage'),
  'POST /api/services/:id/stop': r('manage'),
  'POST /api/services/:id/start': r('manage'),
  'GET /api/services/:id/credentials': r('manage', { auditRead: true }),
  'POST /api/services/:id/upgrade': r('manage'),
  'POST /api/services/:id/upgrade/revert': r('manage'),
  'POST /api/services/:id/upgrade/confirm': r('manage'),
  'GET /api/services/:id/upgrades': r('read'),
  'GET /api/services/:id/events': r('read'),
  'GET /api/services/:id/backups': r('read'),
  'POST /api/services/:id/backups': r('manage'),
  'GET /api/services/:id/backups/:backupID': r('read'),
  // A dump holds the service's data in clear: as a full backup's archive, audited.
  'GET /api/services/:id/backups/:backupID/download': r('manage', { auditRead: true }),
  'DELETE /api/services/:id/backups/:backupID': r('manage'),
  'GET /api/services/:id/backup': r('read'),
  'PUT /api/services/:id/backup': r('manage'),
  'POST /api/services/:id/restore': r('manage'),
  'GET /api/services/:id/restores': r('read'),
  'GET /api/services/:id/restores/:restoreID': r('read'),
  'GET /api/backups': r('read'),
  'POST /api/backups': r('manage'),
  'POST /api/backups/import': r('manage'),
  'GET /api/backups/imports/:id': r('manage'),
  'POST /api/backups/:id/restore': r('manage'),
  'GET /api/restores': r('read'),
  'GET /api/restores/:id': r('read'),
  'GET /api/backups/:id': r('read'),
  // An archive holds every secret in clear.
  'GET /api/backups/:id/download': r('manage', { auditRead: true }),
  'DELETE /api/backups/:id': r('manage'),
  'POST /api/manifests/apply': r('manage'),
  'GET /api/manifests': r('read'),
  'GET /api/codehost/manifest': r('manage'),
  'GET /api/codehost/debug': r('manage'),

  // Stack templates (issue 32 section 3): the catalog shipped with svc, no secret in it; any signed-in user.
  'GET /api/templates': r('read'),
  'GET /api/templates/:name': r('read'),
  'POST /api/templates/:name/stacks': r('manage'),

  // Off-host backup targets (issue 21 section 1): targets are settings with credentials (never shown: a
  // read sees the access key's tail only); listing the copies in a bucket, uploads and imports are admin work.
  'GET /api/backup-targets': r('read'),
  'POST /api/backup-targets': r('manage'),
  'GET /api/backup-targets/:id': r('read'),
  'PUT /api/backup-targets/:id': r('manage'),
  'DELETE /api/backup-targets/:id': r('manage'),
  'POST /api/backup-targets/:id/test': r('manage'),
  'GET /api/backup-targets/:id/remote': r('manage'),
  'POST /api/backup-targets/:id/remote/import': r('manage'),
  // Private registry credentials: the list is a read (never the password); changing or testing them is manage.
  'GET /api/registries': r('read'),
  'POST /api/registries': r('manage'),
  'GET /api/registries/:id': r('read'),
  'PUT /api/registries/:id': r('manage'),
  'DELETE /api/registries/:id': r('manage'),
  'POST /api/registries/:id/test': r('manage'),
  'POST /api/backups/:id/upload': r('manage'),

  // Notifications (issue 21): channels are settings, an admin's; reads show no secret (`target` is redacted).
  'GET /api/notifications/events': r('read'),
  'GET /api/notifications/channels': r('read'),
  'POST /api/notifications/channels': r('manage'),
  'GET /api/notifications/channels/:id': r('read'),
  'PUT /api/notifications/channels/:id': r('manage'),
  'DELETE /api/notifications/channels/:id': r('manage'),
  'POST /api/notifications/channels/:id/test': r('manage'),
  'GET /api/notifications/deliveries': r('read'),
  'GET /api/notifications/outbox': r('read'),

  // Jobs and one-off commands (issue 22): the list is a read; a run's output is like the app's logs; running
  // a job now or a one-off command is the deploy action on that app (a developer of the app, or a
  // deploy:<app> token running migrations from CI): whoever may deploy an image may run a command in it.
  'GET /api/apps/:appID/jobs': r('read'),
  'GET /api/apps/:appID/jobs/:job/runs': r('logs', { app: app('appID') }),
  'POST /api/apps/:appID/jobs/:job/runs': r('deploy', { app: app('appID') }),
  'GET /api/apps/:appID/runs': r('logs', { app: app('appID') }),
  'GET /api/apps/:appID/runs/:runID': r('logs', { app: app('appID') }),
  'POST /api/apps/:appID/run': r('deploy', { app: app('appID') }),

  // Metrics (issue 22): figures are reads; the Prometheus scrape needs an API token (its own check too).
  'GET /metrics': r('read'),
  'GET /api/apps/:id/metrics': r('read'),
  'GET /api/services/:id/metrics': r('read'),
  'GET /api/host/metrics': r('read'),
  'GET /api/metrics/top': r('read'),
  // A terminal into a container reads everything in it, secrets included: administrators (issue 22), audited.
  'GET /api/apps/:id/exec': r('manage', { auditRead: true }),
  'GET /apps/:id/terminal': r('manage'),
  'GET /apps/:id/terminal/ws': r('manage', { auditRead: true }),

  // Nodes (issue 19 section 2): the list is a read; the join command carries the Swarm's join token, a
  // credential, so it is admin work like a node's availability and labels.
  'GET /api/nodes': r('read'),
  'GET /api/nodes/events': r('read'),
  'POST /api/nodes/join': r('manage'),
  'PUT /api/nodes/:id': r('manage'),

  // Users, invitations, audit, team settings.
  'GET /api/users': r('read'),
  'PATCH /api/users/:id': r('users'),
  'DELETE /api/users/:id': r('users'),
  'DELETE /api/users/:id/totp': r('users'),
  'GET /api/invitations': r('users'),
  'POST /api/invitations': r('users'),
  'DELETE /api/invitations/:id': r('users'),
  'GET /api/audit': r('read'),
  'GET /api/team/settings': r('read'),
  'PUT /api/team/settings': r('owner'),

  // Web UI: pages are reads, each form is the action of its REST twin.
  'GET /assets/:file': r('public'),
  'GET /setup': r('public'),
  'POST /setup': r('public'),
  'GET /login': r('public'),
  'POST /login': r('public'),
  'GET /invite/:token': r('public'),
  'POST /invite/:token': r('public'),
  'POST /logout': r('self'),
  'GET /': r('read'),
  'GET /apps/new': r('manage'),
  'POST /apps/new': r('manage'),
  'GET /apps/:id': r('read'),
  // The app page's tabs (issue 34); Logs and Terminal are below with their own rules.
  'GET /apps/:id/deploys': r('read'),
  'GET /apps/:id/env': r('read'),
  'GET /apps/:id/services': r('read'),
  'GET /apps/:id/jobs': r('read'),
  'GET /apps/:id/metrics': r('read'),
  'GET /apps/:id/previews': r('read'),
  'GET /apps/:id/settings': r('read'),
  'POST /apps/:id/deploy': r('deploy', { app: app('id') }),
  'POST /apps/:id/rollback': r('deploy', { app: app('id') }),
  'POST /apps/:id/settings': r('manage'),
  'POST /apps/:id/env': r('configure', { app: app('id') }),
  'POST /apps/:id/env/:key/delete': r('configure', { app: app('id') }),
  'POST /apps/:id/env/:key/reveal': r('reveal', { app: app('id'), auditRead: true }),
  'GET /apps/:id/logs': r('logs', { app: app('id') }),
  'GET /apps/:id/env/:key/history': r('read'),
  'POST /apps/:id/links': r('configure', { app: app('id') }),
  'POST /apps/:id/links/:sid/delete': r('configure', { app: app('id') }),
  // The job editor writes the app's `jobs` (PUT /api/apps/{id}: manage); a job's history and a run's output
  // are read like the app's logs; "Run now" is its API twin's deploy action on that app.
  'GET /apps/:id/add-job': r('manage'),
  'GET /apps/:id/next-runs': r('read'),
  'POST /apps/:id/jobs': r('manage'),
  'GET /apps/:id/jobs/:job/edit': r('manage'),
  'POST /apps/:id/jobs/:job': r('manage'),
  'POST /apps/:id/jobs/:job/delete': r('manage'),
  'GET /apps/:id/jobs/:job': r('logs', { app: app('id') }),
  'POST /apps/:id/jobs/:job/run': r('deploy', { app: app('id') }),
  'GET /apps/:id/runs/:runID': r('logs', { app: app('id') }),
  'GET /apps/:id/delete': r('manage'),
  'POST /apps/:id/delete': r('manage'),
  'GET /deploys/:id': r('deploy_status', { app: deploy('id') }),
  // Stacks (issue 32): the forms are their REST twins' actions (create, change, delete: manage; deploy and
  // roll back: deploy, for every service app at once, so an app-limited developer is refused).
  'GET /stacks': r('read'),
  'GET /stacks/new': r('manage'),
  'POST /stacks/new': r('manage'),
  'GET /stacks/:id': r('read'),
  'POST /stacks/:id/update': r('manage'),
  'POST /stacks/:id/deploy': r('deploy'),
  'POST /stacks/:id/rollback': r('deploy'),
  'POST /stacks/:id/variables': r('manage'),
  'POST /stacks/:id/variables/:key/delete': r('manage'),
  'GET /stacks/:id/delete': r('manage'),
  'POST /stacks/:id/delete': r('manage'),
  'GET /templates': r('read'),
  'GET /templates/:name': r('read'),
  'POST /templates/:name': r('manage'),
  'GET /services': r('read'),
  'POST /services': r('manage'),
  'GET /services/:id': r('read'),
  'POST /services/:id/stop': r('manage'),
  'POST /services/:id/start': r('manage'),
  'POST /services/:id/credentials': r('manage', { auditRead: true }),
  'POST /services/:id/upgrade': r('manage'),
  'POST /services/:id/upgrade/revert': r('manage'),
  'POST /services/:id/upgrade/confirm': r('manage'),
  'POST /services/:id/backups': r('manage'),
  'POST /services/:id/backup': r('manage'),
  'POST /services/:id/restore': r('manage'),
  'GET /services/:id/delete': r('read'),
  'POST /services/:id/delete': r('manage'),
  'GET /nodes': r('read'),
  'POST /nodes/join': r('manage'),
  'POST /nodes/:id/drain': r('manage'),
  'POST /nodes/:id/activate': r('manage'),
  'GET /backups': r('read'),
  'POST /backups': r('manage'),
  'POST /backups/:id/delete': r('manage'),
  'GET /backups/:id/restore': r('manage'),
  'POST /backups/:id/restore': r('manage'),
  'GET /restores/:id': r('read'),
  'GET /settings': r('self'),
  'POST /settings/tokens': r('self'),
  'POST /settings/tokens/:id/delete': r('self'),
  'GET /settings/webhook-secret': r('manage', { auditRead: true }),
  'POST /settings/webhook-secret': r('manage', { auditRead: true }),
  'GET /backups/targets': r('read'),
  'POST /backups/targets': r('manage'),
  'POST /backups/targets/:id/test': r('manage'),
  'POST /backups/targets/:id/delete': r('manage'),
  'GET /backups/targets/:id/copies': r('manage'),
  'POST /backups/targets/:id/import': r('manage'),
  'POST /backups/:id/upload': r('manage'),
  'GET /settings/notifications': r('read'),
  'POST /settings/notifications': r('manage'),
  'POST /settings/notifications/:id/test': r('manage'),
  'POST /settings/notifications/:id/enable': r('manage'),
  'POST /settings/notifications/:id/disable': r('manage'),
  'POST /settings/notifications/:id/delete': r('manage'),
  'GET /settings/registries': r('read'),
  'POST /settings/registries': r('manage'),
  'POST /settings/registries/:id/test': r('manage'),
  'POST /settings/registries/:id/delete': r('manage'),
  'GET /account': r('self'),
  'POST /account/password': r('self'),
  'POST /account/totp': r('self'),
  'POST /account/totp/confirm': r('self'),
  'POST /account/totp/disable': r('self'),
  'POST /account/sessions/:id/delete': r('self'),
  'GET /users': r('read'),
  'POST /users/invite': r('users'),
  'POST /users/:id': r('users'),
  'POST /users/:id/delete': r('users'),
  'POST /users/:id/totp/delete': r('users'),
  'POST /users/invitations/:id/delete': r('users'),
  'POST /users/require-totp': r('owner'),
  'GET /audit': r('read'),
};

/** The rule of a registered route, or undefined (then the request is refused: fail closed). */
export const ruleFor = (method: string, path: string): Rule | undefined => RULES[`${method} ${path}`];

/** A token scope: `read`, `admin`, or `deploy:<app>`. */
export type Scope = { kind: 'read' } | { kind: 'admin' } | { kind: 'deploy'; app: string };

export const SCOPE_FORMAT = /^(read|admin|deploy:[a-z0-9][a-z0-9-]{0,62})$/;

export function parseScope(s: string): Scope | undefined {
  if (!SCOPE_FORMAT.test(s)) return undefined;
  if (s === 'read' || s === 'admin') return { kind: s };
  return { kind: 'deploy', app: s.slice('deploy:'.length) };
}

/** What a scope lets a token do, before its user's role is applied (a token never exceeds its user). */
function scopeAllows(scope: Scope, action: Action, appName: string | undefined): boolean {
  if (scope.kind === 'admin') return true;
  if (scope.kind === 'read') return action === 'read' || action === 'deploy_status';
  return (action === 'deploy' || action === 'deploy_status') && appName === scope.app;
}

export interface Principal {
  role: Role;
  /** App names the user is limited to; null: every app. */
  apps: string[] | null;
  /** The token's scopes; undefined for a browser session (the role alone applies). */
  scopes?: string[];
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/**
 * May `who` do `action` (on the app named `appName`, when the rule names one)? The role must allow it;
 * an app-limited user only on their apps; a token also needs a scope that allows it.
 */
export function decide(who: Principal, action: Action, appName: string | undefined): Verdict {
  if (action === 'public') return { ok: true };
  if (!ROLE_ACTIONS[who.role].has(action)) return { ok: false, reason: `the ${who.role} role may not do this (${action})` };
  if (APP_ACTIONS.has(action) && who.apps !== null && (appName === undefined || !who.apps.includes(appName))) {
    return { ok: false, reason: `your account is limited to the apps ${who.apps.join(', ') || '(none)'}` };
  }
  if (who.scopes !== undefined) {
    const scopes = who.scopes.map(parseScope).filter((s): s is Scope => s !== undefined);
    if (!scopes.some((s) => scopeAllows(s, action, appName))) return { ok: false, reason: `this token's scopes (${who.scopes.join(' ')}) do not allow this (${action})` };
  }
  return { ok: true };
}

/**
 * May `who` use the route `METHOD /path` (its pattern, as in RULES) on the app named `appName`? What a page
 * asks before it offers a form or a button, so nobody is shown an action the route would refuse. An
 * unregistered route is never usable (fail closed, as for requests).
 */
export function mayUse(who: Principal, route: string, appName?: string): boolean {
  const rule = RULES[route];
  if (!rule) return false;
  return decide(who, rule.action, rule.app ? appName : undefined).ok;
}

/** True when a user of `role` limited to `apps` may hold a token with `scope` (checked at creation). */
export function roleCovers(who: { role: Role; apps: string[] | null }, scope: Scope): boolean {
  if (scope.kind === 'read') return true;
  if (scope.kind === 'deploy') return decide(who, 'deploy', scope.app).ok;
  // `admin` means "all of my rights": any role may hold it, it never exceeds the role.
  return true;
}

/** Roles an actor may hand out or take away: only an owner touches owners. */
export const mayAssign = (actor: Role, role: Role): boolean => actor === 'owner' || role !== 'owner';
