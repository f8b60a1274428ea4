// Users, invitations and team settings (docs/api.md "Teams"): adapters over the commands in src/desired/
// (users.ts, settings.ts, totp.ts). Who may call each route is the permission table's business; the rules
// about owners are the commands'.
import { Hono } from 'hono';
import { acceptInvitation, createInvitation, deleteInvitation, listInvitations, removeUser, updateUser } from '../desired/users.js';
import { setTeamSettings, teamSettings } from '../desired/settings.js';
import { clearTotp } from '../desired/totp.js';
import { listUsers } from '../store/users.js';
import { idParam, jsonBody } from '../http/request.js';
import { passesCsrf, sessionCookie } from '../http/session.js';
import { forbidden } from '../errors.js';
import { clientAddress } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';

export function teamRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.get('/users', (c) => c.json(listUsers(deps.db)));
  r.patch('/users/:id', async (c) => c.json(updateUser(deps, c.var.user, idParam(c, 'id', 'user'), await jsonBody(c))));
  r.delete('/users/:id', (c) => {
    removeUser(deps, c.var.user, idParam(c, 'id', 'user'));
    return c.body(null, 204);
  });
  // For a teammate who lost their device and their recovery codes.
  r.delete('/users/:id/totp', (c) => {
    clearTotp(deps, idParam(c, 'id', 'user'));
    return c.body(null, 204);
  });

  r.get('/invitations', (c) => c.json(listInvitations(deps)));
  r.post('/invitations', async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(createInvitation(deps, c.var.user, await jsonBody(c)), 201);
  });
  r.delete('/invitations/:id', (c) => {
    deleteInvitation(deps, idParam(c, 'id', 'invitation'));
    return c.body(null, 204);
  });
  r.post('/invitations/accept', async (c) => {
    // Public, so the same CSRF rule as login: another site must not sign a visitor up to an account.
    if (!passesCsrf(c, deps.config)) throw forbidden('csrf', 'cross-site request refused: send Content-Type: application/json');
    const { user, session } = await acceptInvitation(deps, await jsonBody(c), { address: clientAddress(c), userAgent: c.req.header('user-agent') });
    c.header('Set-Cookie', sessionCookie(c, deps, session));
    return c.json({ user }, 201);
  });

  r.get('/team/settings', (c) => c.json(teamSettings(deps.db)));
  r.put('/team/settings', async (c) => c.json(setTeamSettings(deps, await jsonBody(c))));
  return r;
}
