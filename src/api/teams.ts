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
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { createdInvitationJsonSchema, invitationJsonSchema, userAnswerSchema, userJsonSchema } from '../presenters/account-json.js';
import { acceptSchema, inviteSchema, updateUserSchema } from '../desired/users.js';
import { teamSettingsSchema } from '../desired/settings.js';

const op = operations('Teams');

export function teamRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.get('/users', op({ summary: 'The team', response: z.array(userJsonSchema) }), (c) => c.json(listUsers(deps.db)));
  r.patch('/users/:id', op({ summary: "Change a user's role or app limits", body: updateUserSchema, response: userJsonSchema, errors: { 403: 'forbidden: only an owner changes owners', 409: 'conflict: the last owner' } }), async (c) => c.json(updateUser(deps, c.var.user, idParam(c, 'id', 'user'), await jsonBody(c))));
  r.delete('/users/:id', op({ summary: 'Remove a user', status: 204, errors: { 403: 'forbidden: only an owner removes owners', 409: 'conflict: the last owner, or yourself' } }), (c) => {
    removeUser(deps, c.var.user, idParam(c, 'id', 'user'));
    return c.body(null, 204);
  });
  // For a teammate who lost their device and their recovery codes.
  r.delete('/users/:id/totp', op({ summary: "Clear a user's second factor", status: 204 }), (c) => {
    clearTotp(deps, idParam(c, 'id', 'user'));
    return c.body(null, 204);
  });

  r.get('/invitations', op({ summary: 'Open invitations', response: z.array(invitationJsonSchema) }), (c) => c.json(listInvitations(deps)));
  r.post('/invitations', op({ summary: 'Invite someone (the link is in this answer only)', body: inviteSchema, status: 201, response: createdInvitationJsonSchema, errors: { 403: 'forbidden: only an owner invites owners' } }), async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(createInvitation(deps, c.var.user, await jsonBody(c)), 201);
  });
  r.delete('/invitations/:id', op({ summary: 'Withdraw an invitation', status: 204 }), (c) => {
    deleteInvitation(deps, idParam(c, 'id', 'invitation'));
    return c.body(null, 204);
  });
  r.post('/invitations/accept', op({ summary: 'Accept an invitation: creates the account and logs in', body: acceptSchema, status: 201, response: userAnswerSchema, errors: { 403: 'csrf', 404: 'not_found: no such invitation, used or expired', 409: 'conflict: the username is taken' } }), async (c) => {
    // Public, so the same CSRF rule as login: another site must not sign a visitor up to an account.
    if (!passesCsrf(c, deps.config)) throw forbidden('csrf', 'cross-site request refused: send Content-Type: application/json');
    const { user, session } = await acceptInvitation(deps, await jsonBody(c), { address: clientAddress(c), userAgent: c.req.header('user-agent') });
    c.header('Set-Cookie', sessionCookie(c, deps, session));
    return c.json({ user }, 201);
  });

  r.get('/team/settings', op({ summary: 'Team settings', response: teamSettingsSchema }), (c) => c.json(teamSettings(deps.db)));
  r.put('/team/settings', op({ summary: 'Change team settings (owners)', body: teamSettingsSchema, response: teamSettingsSchema, errors: { 409: 'conflict: turn on your own second factor first' } }), async (c) => c.json(setTeamSettings(deps, await jsonBody(c))));
  return r;
}
