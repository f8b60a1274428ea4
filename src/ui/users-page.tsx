/** @jsxImportSource hono/jsx */
// `/users`: the team (roles, app limits, second factor), invitations (the link shown once), and the
// owner's "require a second factor for admins". The same commands as /api/users and /api/invitations.
import { Hono, type Context } from 'hono';
import { ROLE_ACTIONS, ROLES } from '../auth/permissions.js';
import { clearTotp } from '../desired/totp.js';
import { DomainError } from '../errors.js';
import { createInvitation, deleteInvitation, listInvitations, removeUser, updateUser } from '../desired/users.js';
import { setTeamSettings, teamSettings } from '../desired/settings.js';
import { listUsers } from '../store/users.js';
import { idParam } from '../http/request.js';
import { publicBaseUrl } from '../http/transport.js';
import { checked, done, flash, int, readForm, render, text, type Form, type UiDeps, type UiEnv } from './context.js';
import { Check, Csrf, Field, Layout, PostButton, Select, Time } from './layout.js';

const ROLE_OPTIONS = ROLES.map((r) => [r, r] as const);

/** The app limits field: names separated by spaces or commas; blank is "every app". */
const appsOf = (f: Form): string[] | null => {
  const v = text(f, 'apps');
  return v ? v.split(/[\s,]+/).filter(Boolean) : null;
};

export function usersPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();

  const page = (c: Context<UiEnv>, o: { error?: string; status?: 200 | 400 | 403 | 404 | 409; link?: string } = {}) => {
    const manages = ROLE_ACTIONS[c.var.user.role].has('users');
    const owner = c.var.user.role === 'owner';
    const users = listUsers(deps.db);
    const invitations = manages ? listInvitations(deps) : [];
    if (o.link) c.header('cache-control', 'no-store');
    return render(
      c,
      <Layout title="Users" csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error}>
        <section aria-labelledby="h-users">
          <h2 id="h-users">Team</h2>
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Role and apps</th>
                  <th scope="col">Two-factor</th>
                  <th scope="col">Since</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {users.map((u) => (
                  <tr>
                    <td>{u.username}</td>
                    <td>
                      {manages ? (
                        <form method="post" action={`/users/${u.id}`} class="row">
                          <Csrf token={c.var.csrf} />
                          <Select label={`Role of ${u.username}`} name="role" value={u.role} options={ROLE_OPTIONS} />
                          <Field label="Apps" name="apps" value={u.apps?.join(' ') ?? ''} hint="developers: blank for every app" />
                          <button type="submit" class="secondary small">Save</button>
                        </form>
                      ) : (
                        <>
                          {u.role}
                          {u.apps ? ` (${u.apps.join(', ')})` : ''}
                        </>
                      )}
                    </td>
                    <td>{u.totp_enabled ? 'on' : 'off'}</td>
                    <td>
                      <Time at={u.created_at} />
                    </td>
                    <td>
                      {manages && (
                        <span class="actions">
                          {u.totp_enabled && <PostButton action={`/users/${u.id}/totp/delete`} csrf={c.var.csrf} label="Reset 2FA" context={u.username} tone="secondary" small />}
                          <PostButton action={`/users/${u.id}/delete`} csrf={c.var.csrf} label="Remove" context={u.username} tone="danger" small />
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
        {manages && (
          <section aria-labelledby="h-invite">
            <h2 id="h-invite">Invite</h2>
            {o.link && (
              <div class="notice ok" role="status">
                <p>Send this link to your teammate. It works once, until it expires; it is shown only now.</p>
                <code class="token" id="invite-link">
                  {o.link}
                </code>
              </div>
            )}
            <form method="post" action="/users/invite" class="row">
              <Csrf token={c.var.csrf} />
              <Select label="Role" name="role" value="developer" options={ROLE_OPTIONS} />
              <Field label="Apps" name="apps" hint="developers: blank for every app" />
              <Field label="Valid for hours" name="expires_in_hours" value={72} inputmode="numeric" />
              <button type="submit">Create invitation link</button>
            </form>
            <ul>
              {invitations.map((i) => (
                <li>
                  {i.role}
                  {i.apps ? ` (${i.apps.join(', ')})` : ''}, by {i.created_by}, expires <Time at={i.expires_at} />
                  <PostButton action={`/users/invitations/${i.id}/delete`} csrf={c.var.csrf} label="Delete" context={`invitation ${i.id}`} tone="secondary" small />
                </li>
              ))}
            </ul>
          </section>
        )}
        {owner && (
          <section aria-labelledby="h-team">
            <h2 id="h-team">Team settings</h2>
            <form method="post" action="/users/require-totp" class="row">
              <Csrf token={c.var.csrf} />
              <Check label="Require two-factor authentication for admins and owners" name="require" checked={teamSettings(deps.db).require_totp_for_admins} />
              <button type="submit" class="secondary">Save</button>
            </form>
          </section>
        )}
      </Layout>,
      o.status ?? 200,
    );
  };

  const failed = (c: Context<UiEnv>, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    const status = err.kind === 'forbidden' ? 403 : err.kind === 'conflict' ? 409 : err.kind === 'not_found' ? 404 : 400;
    return page(c, { error: err.message, status });
  };

  r.get('/users', (c) => page(c));

  r.post('/users/invite', async (c) => {
    const f = await readForm(c, deps);
    try {
      const inv = createInvitation(deps, c.var.user, { role: f.role, apps: appsOf(f), expires_in_hours: int(f, 'expires_in_hours') ?? 72 });
      return page(c, { link: publicBaseUrl(c, deps.config) + inv.path });
    } catch (err) {
      return failed(c, err);
    }
  });

  r.post('/users/invitations/:id/delete', async (c) => {
    await readForm(c, deps);
    deleteInvitation(deps, idParam(c, 'id', 'invitation'));
    return done(c, '/users', 'invitation_deleted');
  });

  r.post('/users/require-totp', async (c) => {
    const f = await readForm(c, deps);
    setTeamSettings(deps, { require_totp_for_admins: checked(f, 'require') });
    return done(c, '/users', 'team_saved');
  });

  r.post('/users/:id', async (c) => {
    const f = await readForm(c, deps);
    try {
      updateUser(deps, c.var.user, idParam(c, 'id', 'user'), { role: f.role, apps: f.role === 'developer' ? appsOf(f) : undefined });
      return done(c, '/users', 'user_saved');
    } catch (err) {
      return failed(c, err);
    }
  });

  r.post('/users/:id/totp/delete', async (c) => {
    await readForm(c, deps);
    clearTotp(deps, idParam(c, 'id', 'user'));
    return done(c, '/users', 'totp_reset');
  });

  r.post('/users/:id/delete', async (c) => {
    await readForm(c, deps);
    try {
      removeUser(deps, c.var.user, idParam(c, 'id', 'user'));
      return done(c, '/users', 'user_removed');
    } catch (err) {
      return failed(c, err);
    }
  });

  return r;
}
