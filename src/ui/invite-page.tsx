/** @jsxImportSource hono/jsx */
// `/invite/<token>`: an invitation link. The teammate picks a username and password; the account gets the
// invitation's role and the link stops working. Unknown, used or expired links all say the same.
import { Hono, type Context } from 'hono';
import { DomainError } from '../errors.js';
import { acceptInvitation, openInvitation } from '../desired/users.js';
import { sessionCookie } from '../http/session.js';
import { clientAddress } from '../http/transport.js';
import { readForm, render, type UiDeps, type UiEnv } from './context.js';
import { Csrf, Field, Layout } from './layout.js';

const GONE = 'This invitation link is unknown, already used or expired. Ask for a new one.';

export function invitePage(deps: UiDeps) {
  const r = new Hono<UiEnv>();

  const page = (c: Context<UiEnv>, token: string, o: { error?: string; username?: string } = {}, status: 200 | 400 | 404 | 409 = 200) => {
    const inv = openInvitation(deps, token);
    if (!inv) return render(c, <Layout title="Invitation" csrf={c.var.csrf} error={GONE} />, 404);
    return render(
      c,
      <Layout title="Join svc" csrf={c.var.csrf} error={o.error}>
        <p>
          You are invited as <strong>{inv.role}</strong>
          {inv.apps ? ` of the apps ${inv.apps.join(', ')}` : ''}. Choose a username and a password.
        </p>
        <form method="post" action={`/invite/${token}`} class="stack narrow">
          <Csrf token={c.var.csrf} />
          <Field label="Username" name="username" value={o.username} required autocomplete="username" />
          <Field label="Password" name="password" type="password" required autocomplete="new-password" hint="at least 10 characters" />
          <div>
            <button type="submit">Create account</button>
          </div>
        </form>
      </Layout>,
      status,
    );
  };

  r.get('/invite/:token', (c) => page(c, c.req.param('token')));
  r.post('/invite/:token', async (c) => {
    const form = await readForm(c, deps);
    const token = c.req.param('token');
    try {
      const { session } = await acceptInvitation(deps, { token, username: form.username ?? '', password: form.password ?? '' }, { address: clientAddress(c), userAgent: c.req.header('user-agent') });
      c.header('Set-Cookie', sessionCookie(c, deps, session), { append: true });
      return c.redirect('/', 303);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return page(c, token, { error: err.message, username: form.username }, err.kind === 'conflict' ? 409 : err.kind === 'not_found' ? 404 : 400);
    }
  });
  return r;
}
