/** @jsxImportSource hono/jsx */
// First-run setup, login and logout pages. They call the same functions as POST /api/auth/setup and
// /api/auth/login (src/api/auth-flows.ts: one validation, one login limiter) and set the same cookie.
import { Hono, type Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { LoginLimited } from '../http/auth-flows.js';
import { DomainError } from '../errors.js';
import { statusOf } from '../http/errors.js';
import { sessionCookie, SESSION_COOKIE } from '../http/session.js';
import { clientAddress } from '../http/transport.js';
import { revokeSession } from '../store/sessions.js';
import { setupRequired } from '../store/users.js';
import { done, flash, readForm, render, type UiDeps, type UiEnv } from './context.js';
import { Csrf, Field, Layout } from './layout.js';

const CredentialsForm = (p: { action: string; csrf: string; button: string; username?: string; newPassword?: boolean; next?: string; code?: boolean }) => (
  <form method="post" action={p.action} class="stack narrow">
    <Csrf token={p.csrf} />
    {p.next && <input type="hidden" name="next" value={p.next} />}
    <Field label="Username" name="username" value={p.username} required autocomplete="username" />
    <Field
      label="Password"
      name="password"
      type="password"
      required
      autocomplete={p.newPassword ? 'new-password' : 'current-password'}
      hint={p.newPassword ? 'at least 10 characters' : undefined}
    />
    {p.code && <Field label="Authentication code" name="code" autocomplete="one-time-code" hint="only if you set up two-factor authentication: 6 digits, or a recovery code" />}
    <div>
      <button type="submit">{p.button}</button>
    </div>
  </form>
);

/** Only a local path may follow a login (no open redirect to another site). */
export const safeNext = (v: string | undefined): string => (v && /^\/(?![/\\])[^\s]*$/.test(v) ? v : '/');

const message = (err: unknown) => (err instanceof DomainError ? err.message : 'something went wrong; try again');
const status = statusOf;

export function authPages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;

  const setupPage = (c: Context<UiEnv>, o: { error?: string; username?: string } = {}, code: 200 | 400 | 409 = 200) =>
    render(
      c,
      <Layout title="Set up svc" csrf={c.var.csrf} error={o.error}>
        <p>Create the administrator account. You will use it to log in to this page and to create API tokens.</p>
        <CredentialsForm action="/setup" csrf={c.var.csrf} button="Create account" username={o.username} newPassword />
      </Layout>,
      code,
    );

  const loginPage = (c: Context<UiEnv>, o: { error?: string; username?: string; next?: string } = {}, code: 200 | 401 | 400 | 429 = 200) =>
    render(
      c,
      <Layout title="Log in" csrf={c.var.csrf} error={o.error} message={flash(c)}>
        <CredentialsForm action="/login" csrf={c.var.csrf} button="Log in" username={o.username} next={o.next} code />
      </Layout>,
      code,
    );

  r.get('/setup', (c) => (setupRequired(db) ? setupPage(c) : c.redirect('/login', 303)));
  r.post('/setup', async (c) => {
    const form = await readForm(c, deps);
    if (!setupRequired(db)) return c.redirect('/login', 303);
    try {
      const { session } = await deps.flows.setup({ username: form.username ?? '', password: form.password ?? '' });
      c.header('Set-Cookie', sessionCookie(c, deps, session), { append: true });
      return done(c, '/', 'welcome');
    } catch (err) {
      return setupPage(c, { error: message(err), username: form.username }, status(err) === 409 ? 409 : 400);
    }
  });

  r.get('/login', (c) => (setupRequired(db) ? c.redirect('/setup', 303) : loginPage(c, { next: c.req.query('next') })));
  r.post('/login', async (c) => {
    const form = await readForm(c, deps);
    try {
      const code = (form.code ?? '').trim();
      const factor = code === '' ? {} : /^\d{6}$/.test(code) ? { totp: code } : { recovery_code: code };
      const { session } = await deps.flows.login({ username: form.username ?? '', password: form.password ?? '', ...factor }, clientAddress(c), c.req.header('user-agent'));
      c.header('Set-Cookie', sessionCookie(c, deps, session), { append: true });
      return c.redirect(safeNext(form.next), 303);
    } catch (err) {
      if (err instanceof LoginLimited) c.header('Retry-After', String(err.retryAfterSeconds));
      const code = status(err);
      return loginPage(c, { error: message(err), username: form.username, next: form.next }, code === 429 ? 429 : code === 400 ? 400 : 401);
    }
  });

  r.post('/logout', async (c) => {
    await readForm(c, deps);
    const token = getCookie(c, SESSION_COOKIE);
    if (token) revokeSession(db, token);
    c.header('Set-Cookie', sessionCookie(c, deps, '', true), { append: true });
    return done(c, '/login', 'logged_out');
  });

  return r;
}
