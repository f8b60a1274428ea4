// The tokens command: API tokens with scopes and an expiry (docs/api.md "Teams"), created and revoked by
// the logged-in user from the REST API or the settings page. A token never exceeds its user: a scope the
// role cannot use is refused at creation, and every request applies both the role and the scopes.
import { z } from 'zod';
import { conflict, invalid } from '../errors.js';
import { parseScope, roleCovers, SCOPE_FORMAT } from '../auth/permissions.js';
import { parseInput } from './parse.js';
import { iso } from '../store/sessions.js';
import { createApiToken, deleteApiToken, listApiTokens, type TokenJson } from '../store/tokens.js';
import type { PublicUser } from '../store/users.js';
import type { CommandCtx } from './context.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export const createTokenSchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(z.string().regex(SCOPE_FORMAT, 'must be read, admin or deploy:<app>')).min(1).max(20).default(['admin']),
    /** Days until it expires (1-3650); absent or null: never. */
    expires_in_days: z.number().int().min(1).max(3650).nullable().optional(),
  })
  .strict();

/** Creates a token for `user`; the answer is the only place the token itself ever appears. */
export function createToken(ctx: Pick<CommandCtx, 'db' | 'now'>, user: PublicUser, raw: unknown): TokenJson & { token: string } {
  const input = parseInput(createTokenSchema, raw);
  const scopes = [...new Set(input.scopes)];
  for (const s of scopes) {
    if (!roleCovers(user, parseScope(s)!)) {
      throw invalid(`scopes: ${s} exceeds what your role (${user.role}) may do`, { issues: [{ path: 'scopes', message: `${s} exceeds your role` }] });
    }
  }
  // Names tell tokens apart in the list (and when one must be revoked): one name, one token, per user.
  if (listApiTokens(ctx.db, user.id).some((t) => t.name === input.name)) throw conflict(`a token named ${input.name} already exists; pick another name or delete that token first`);
  const days = input.expires_in_days ?? null;
  const expiresAt = days === null ? null : iso(new Date(ctx.now().getTime() + days * DAY_MS));
  return createApiToken(ctx.db, user.id, { name: input.name, scopes, expiresAt }, ctx.now());
}

/** Revokes one of the user's tokens; 404 for another user's or an unknown id. */
export function deleteToken(ctx: Pick<CommandCtx, 'db'>, userId: number, id: number): void {
  deleteApiToken(ctx.db, userId, id);
}
