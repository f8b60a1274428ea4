/** @jsxImportSource hono/jsx */
// `/account`: one's own password, second factor (QR code rendered on the server, the ten recovery codes
// shown once) and sessions. The same commands as /api/account/*.
import { Hono, type Context } from 'hono';
import { beginTotp, clearTotp, confirmTotp, pendingTotp, type TotpSetup } from '../desired/totp.js';
import { recoveryCodesLeft } from '../auth/totp.js';
import { DomainError, unauthenticated } from '../errors.js';
import { changePassword } from '../desired/users.js';
import { mustEnrolTotp } from '../desired/settings.js';
import { deleteSession, listSessions } from '../store/sessions.js';
import { sessionJson } from '../presenters/account-json.js';
import { findUser } from '../store/users.js';
import { idParam } from '../http/request.js';
import { done, flash, readForm, render, type UiDeps, type UiEnv } from './context.js';
import { Csrf, Field, Layout, PostButton, Time } from './layout.js';

interface Extra {
  error?: string;
  status?: 200 | 400 | 401 | 409;
  setup?: TotpSetup;
  codes?: string[];
}

export function accountPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const me = (c: Context<UiEnv>) => {
    const row = findUser(deps.db, c.var.user.id);
    if (!row) throw unauthenticated('your account no longer exists');
    return row;
  };

  const page = (c: Context<UiEnv>, o: Extra = {}) => {
    const user = me(c);
    const sessions = listSessions(deps.db, user.id).map((s) => sessionJson(s, c.var.sessionId));
    const enabled = user.totpEnabledAt !== null;
    if (o.setup || o.codes) c.header('cache-control', 'no-store');
    const warn = mustEnrolTotp(deps.db, c.var.user) ? 'An owner requires a second factor for your role: set it up below before anything else.' : undefined;
    return render(
      c,
      <Layout title="Account" csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error ?? warn}>
        <p>
          Logged in as <strong>{user.username}</strong>, role <strong>{user.role}</strong>
          {user.apps ? `, limited to the apps ${user.apps.join(', ')}` : ''}.
        </p>
        <section aria-labelledby="h-totp">
          <h2 id="h-totp">Two-factor authentication</h2>
          {o.codes ? (
            <div class="notice ok" role="status">
              <p>Two-factor authentication is on. Keep these recovery codes somewhere safe: each works once, and they are shown only now.</p>
              <ul id="recovery-codes" class="mono">
                {o.codes.map((code) => (
                  <li>{code}</li>
                ))}
              </ul>
            </div>
          ) : enabled ? (
            <>
              <p>
                On since <Time at={user.totpEnabledAt} />; {recoveryCodesLeft(deps.db, user.id)} recovery codes left.
              </p>
              <form method="post" action="/account/totp/disable" class="row">
                <Csrf token={c.var.csrf} />
                <Field label="Code to turn it off" name="code" autocomplete="one-time-code" required />
                <button type="submit" class="secondary">Turn off</button>
              </form>
            </>
          ) : o.setup ? (
            <>
              <p>Scan this code with your authenticator app, or type the key, then enter the 6-digit code it shows.</p>
              <img id="totp-qr" src={`data:image/svg+xml;base64,${Buffer.from(o.setup.qr_svg).toString('base64')}`} alt="QR code of the authenticator key" width="200" height="200" />
              <p>
                Key: <code id="totp-secret">{o.setup.secret}</code>
              </p>
              <form method="post" action="/account/totp/confirm" class="row">
                <Csrf token={c.var.csrf} />
                <Field label="Code" name="code" autocomplete="one-time-code" inputmode="numeric" required />
                <button type="submit">Turn on</button>
              </form>
            </>
          ) : (
            <>
              <p>Off. With it on, logging in needs a code from an authenticator app as well as the password.</p>
              <PostButton action="/account/totp" csrf={c.var.csrf} label="Set up two-factor authentication" />
            </>
          )}
        </section>
        <section aria-labelledby="h-password">
          <h2 id="h-password">Password</h2>
          <form method="post" action="/account/password" class="stack narrow">
            <Csrf token={c.var.csrf} />
            <Field label="Current password" name="current_password" type="password" autocomplete="current-password" required />
            <Field label="New password" name="new_password" type="password" autocomplete="new-password" hint="at least 10 characters" required />
            <div>
              <button type="submit">Change password</button>
            </div>
          </form>
        </section>
        <section aria-labelledby="h-sessions">
          <h2 id="h-sessions">Sessions</h2>
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Last used</th>
                  <th scope="col">From</th>
                  <th scope="col">Browser</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {sessions.map((s) => (
                  <tr>
                    <td>
                      <Time at={s.created_at} />
                    </td>
                    <td>
                      <Time at={s.last_seen_at} />
                    </td>
                    <td>{s.address ?? '-'}</td>
                    <td>{s.user_agent ?? '-'}</td>
                    <td>{s.current ? <span class="muted">this session</span> : <PostButton action={`/account/sessions/${s.id}/delete`} csrf={c.var.csrf} label="End" context={`session ${s.id}`} tone="secondary" small />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      </Layout>,
      o.status ?? 200,
    );
  };

  const failed = (c: Context<UiEnv>, err: unknown, extra: Extra = {}) => {
    if (!(err instanceof DomainError)) throw err;
    const status = err.kind === 'unauthenticated' ? 401 : err.kind === 'conflict' ? 409 : 400;
    return page(c, { ...extra, error: err.message, status });
  };

  r.get('/account', (c) => page(c));

  r.post('/account/totp', async (c) => {
    await readForm(c, deps);
    try {
      return page(c, { setup: await beginTotp(deps, me(c)) });
    } catch (err) {
      return failed(c, err);
    }
  });

  r.post('/account/totp/confirm', async (c) => {
    const form = await readForm(c, deps);
    try {
      return page(c, { codes: confirmTotp(deps, me(c), { code: form.code ?? '' }).recovery_codes });
    } catch (err) {
      return failed(c, err, { setup: await pendingTotp(deps, me(c)) });
    }
  });

  r.post('/account/totp/disable', async (c) => {
    const form = await readForm(c, deps);
    const code = (form.code ?? '').trim();
    const user = me(c);
    if (!deps.flows.secondFactor(user, /^\d{6}$/.test(code) ? { totp: code } : { recovery_code: code })) {
      return page(c, { error: 'wrong authentication code', status: 401 });
    }
    clearTotp(deps, user.id);
    return done(c, '/account', 'totp_off');
  });

  r.post('/account/password', async (c) => {
    const form = await readForm(c, deps);
    try {
      await changePassword(deps, c.var.user.id, c.var.sessionId, { current_password: form.current_password ?? '', new_password: form.new_password ?? '' });
      return done(c, '/account', 'password_changed');
    } catch (err) {
      return failed(c, err);
    }
  });

  r.post('/account/sessions/:id/delete', async (c) => {
    await readForm(c, deps);
    deleteSession(deps.db, c.var.user.id, idParam(c, 'id', 'session'));
    return done(c, '/account', 'session_ended');
  });

  return r;
}
