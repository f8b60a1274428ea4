// What every UI route shares: the context variables the session middleware sets, reading a posted form
// (CSRF checked first, always), turning form strings into the JSON-shaped input the commands' zod schemas
// expect, and the fixed confirmation messages a redirect may name (`?m=<code>`; never free text).
import { mayUse } from '../auth/permissions.js';
import type { Context } from 'hono';
import type { AuthFlows } from '../http/auth-flows.js';
import type { EdgeDeps } from '../http/deps.js';
import type { PublicUser } from '../store/users.js';
import { CSRF_FIELD, type Csrf } from './csrf.js';

export type UiEnv = {
  Variables: {
    user: PublicUser;
    authVia: 'session' | 'token';
    sessionId?: number;
    /** The CSRF token to put in this response's forms. */
    csrf: string;
  };
};

export interface UiDeps extends EdgeDeps {
  flows: AuthFlows;
  csrf: Csrf;
}

export type Form = Record<string, string>;

/** The posted fields as strings (files ignored), after the CSRF check: a POST without its token is a 403. */
export async function readForm(c: Context, deps: UiDeps): Promise<Form> {
  let parsed: Record<string, unknown> = {};
  try {
    parsed = await c.req.parseBody();
  } catch {
    parsed = {};
  }
  deps.csrf.check(c, parsed[CSRF_FIELD]);
  const out: Form = {};
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string' && k !== CSRF_FIELD) out[k] = v;
  return out;
}

/** A trimmed text field; absent or blank is undefined (the API's default applies). */
export const text = (f: Form, k: string): string | undefined => {
  const v = f[k]?.trim();
  return v ? v : undefined;
};

/** Blank is null: the form clears the field (settings form). */
export const textOrNull = (f: Form, k: string): string | null => text(f, k) ?? null;

/** A whole number field; anything else is passed on as text so the schema names the field in its error. */
export const int = (f: Form, k: string): number | string | undefined => {
  const v = text(f, k);
  if (v === undefined) return undefined;
  return /^[0-9]{1,9}$/.test(v) ? Number(v) : v;
};

/** A checkbox: present when ticked. */
export const checked = (f: Form, k: string): boolean => f[k] === 'on' || f[k] === 'true';

/** Drops undefined values so the schemas see the field as absent. */
export const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export const MESSAGES: Record<string, string> = {
  welcome: 'Welcome to svc. Create your first app to get started.',
  app_created: 'App created. Deploy an image to start it.',
  deploy_queued: 'Deploy queued. Its progress is shown below.',
  rollback_queued: 'Rollback queued. Its progress is shown below.',
  env_saved: 'Variable saved. It applies at the next deploy.',
  env_deleted: 'Variable deleted. The change applies at the next deploy.',
  linked: 'Service linked. Its variables are injected at the next deploy.',
  unlinked: 'Service unlinked. The change applies at the next deploy.',
  app_saved: 'Changes saved.',
  job_saved: 'Job saved. Its schedule applies from now on.',
  job_removed: 'Job removed. Its history is kept.',
  job_run_queued: 'Run queued. It starts in a moment; its output appears under History when it ends.',
  app_deleted: 'App deleted. Its containers and route are being removed.',
  stack_created: 'Stack created. Its services are deployed one by one in depends_on order.',
  stack_saved: 'Saved. The services that changed are deployed again; the others are not touched.',
  stack_deploy_queued: 'Stack deploy queued. Its steps are shown below.',
  stack_deleted: 'Stack deleted. Its containers, networks and routes are being removed.',
  service_created: 'Service created. It is being provisioned.',
  service_stopping: 'Service is stopping. Its data is kept.',
  service_starting: 'Service is starting.',
  service_upgrading: 'Upgrade started. Its steps appear under Version as they are done.',
  service_reverting: 'Revert started: the old version is started again and the apps redeployed onto it.',
  service_confirming: 'Upgrade confirmed: the old version and its data are being removed.',
  service_deleted: 'Service deleted.',
  service_backup_started: 'Backup of the service started. It appears below when written.',
  service_backup_saved: 'Backup schedule saved.',
  service_restore_started: 'Restore started: a safety backup first (into this service), then the load. Its outcome is shown under Backups.',
  backup_created: 'Backup created.',
  backup_deleted: 'Backup deleted.',
  backup_restored: 'Backup restored.',
  target_created: 'Backup target added. Use "Test" to check that svc can write to it.',
  target_deleted: 'Backup target deleted. The copies in its bucket stay there.',
  copy_importing: 'The copy is being imported; it appears below as a backup with trigger "import" once checked.',
  upload_queued: 'The backup is being copied to its targets.',
  token_deleted: 'Token deleted.',
  logged_out: 'You are logged out.',
  totp_required: 'An owner requires a second factor for your role: set it up below before anything else.',
  password_changed: 'Password changed. Your other sessions have ended.',
  session_ended: 'Session ended.',
  totp_off: 'Two-factor authentication is off.',
  user_saved: 'User saved.',
  user_removed: 'User removed. Their sessions and tokens have ended.',
  invitation_deleted: 'Invitation deleted.',
  team_saved: 'Team settings saved.',
  totp_reset: 'Their second factor is removed; they can set up a new one.',
};

/** The confirmation a redirect asked for, if it names a known one. */
export const flash = (c: Context): string | undefined => MESSAGES[c.req.query('m') ?? ''];

/** 303 to `path` (a form POST becomes a GET), with a confirmation code. */
export const done = (c: Context, path: string, message?: keyof typeof MESSAGES) =>
  c.redirect(message ? `${path}${path.includes('?') ? '&' : '?'}m=${message}` : path, 303);

/**
 * May the signed-in user use `route` (a pattern of the permission table, `POST /services`) on the app
 * named `appName`? Pages offer only the forms and buttons the route would accept (the route still checks).
 */
export const may = (c: Context<UiEnv>, route: string, appName?: string): boolean => mayUse(c.var.user, route, appName);

/** Sends a page: the doctype, then the rendered JSX. Pages carry CSRF tokens and private data: never cached. */
export function render(c: Context, page: { toString(): string | Promise<string> }, status: 200 | 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 503 = 200) {
  c.header('cache-control', 'no-store');
  const body = page.toString();
  return c.html(typeof body === 'string' ? '<!doctype html>' + body : body.then((b) => '<!doctype html>' + b), status);
}
