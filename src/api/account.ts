// One's own account (docs/api.md "Teams"): password, second factor, sessions. Every route here is `self`
// in the permission table: any logged-in user, for themselves only.
import { Hono } from 'hono';
import { unauthenticated } from '../errors.js';
import type { AuthFlows } from '../http/auth-flows.js';
import { beginTotp, clearTotp, codeSchema, confirmTotp } from '../desired/totp.js';
import { parseInput } from '../desired/parse.js';
import { changePassword } from '../desired/users.js';
import { deleteSession, listSessions } from '../store/sessions.js';
import { findUser } from '../store/users.js';
import { idParam, jsonBody } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import type { Context } from 'hono';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { recoveryCodesJsonSchema, sessionJson, sessionJsonSchema, totpSetupJsonSchema } from '../presenters/account-json.js';
import { passwordChangeSchema } from '../desired/users.js';

const op = operations('Account');

export function accountRoutes(deps: ApiDeps, flows: AuthFlows) {
  const r = new Hono<ApiEnv>();
  const me = (c: Context<ApiEnv>) => {
    const row = findUser(deps.db, c.var.user.id);
    if (!row) throw unauthenticated('your account no longer exists');
    return row;
  };

  r.post('/account/password', op({ summary: 'Change your password (ends your other sessions)', body: passwordChangeSchema, status: 204, errors: { 401: 'unauthenticated: wrong current password' } }), async (c) => {
    await changePassword(deps, c.var.user.id, c.var.sessionId, await jsonBody(c));
    return c.body(null, 204);
  });

  r.get('/account/sessions', op({ summary: 'Your sessions, most recently used first', response: z.array(sessionJsonSchema) }), (c) => c.json(listSessions(deps.db, c.var.user.id).map((s) => sessionJson(s, c.var.sessionId))));

  r.delete('/account/sessions/:id', op({ summary: 'End one of your sessions', status: 204 }), (c) => {
    deleteSession(deps.db, c.var.user.id, idParam(c, 'id', 'session'));
    return c.body(null, 204);
  });

  r.post('/account/totp', op({ summary: 'Begin setting up a second factor (secret, otpauth URL, recovery codes)', status: 201, response: totpSetupJsonSchema, errors: { 409: 'conflict: a second factor is already on' } }), async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(await beginTotp(deps, me(c)), 201);
  });

  r.post('/account/totp/confirm', op({ summary: 'Confirm the second factor with a code', body: codeSchema, response: recoveryCodesJsonSchema, errors: { 401: 'unauthenticated: wrong code', 409: 'conflict: nothing to confirm' } }), async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(confirmTotp(deps, me(c), await jsonBody(c)));
  });

  // Turning it off needs a current code (or a recovery code): a stolen session alone cannot remove it.
  r.delete('/account/totp', op({ summary: 'Turn your second factor off (needs a current or recovery code)', body: codeSchema, status: 204, errors: { 401: 'unauthenticated: wrong authentication code' } }), async (c) => {
    const { code } = parseInput(codeSchema, await jsonBody(c));
    const user = me(c);
    if (user.totpEnabledAt && !flows.secondFactor(user, /^\d{6}$/.test(code) ? { totp: code } : { recovery_code: code })) {
      throw unauthenticated('wrong authentication code');
    }
    clearTotp(deps, user.id);
    return c.body(null, 204);
  });

  return r;
}
