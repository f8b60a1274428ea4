// The tokens command: API tokens (API.md "Authentication") created and revoked by the logged-in user, from
// the REST API or the settings page. The token is in the create answer only; lists show names and dates.
import { z } from 'zod';
import { conflict } from '../errors.js';
import { createApiToken, deleteApiToken, listApiTokens, type TokenJson } from '../store/tokens.js';
import type { CommandCtx, Origin } from './context.js';
import { parseInput } from './parse.js';

export const createTokenSchema = z.object({ name: z.string().trim().min(1).max(100) }).strict();

/** Creates a token for `userId`; the answer is the only place the token itself ever appears. */
export function createToken(ctx: CommandCtx, userId: number, raw: unknown, origin: Origin): TokenJson & { token: string } {
  const input = parseInput(createTokenSchema, raw);
  // Names tell tokens apart in the list (and when one must be revoked): one name, one token, per user.
  if (listApiTokens(ctx.db, userId).some((t) => t.name === input.name)) throw conflict(`a token named ${input.name} already exists; pick another name or delete that token first`);
  const created = createApiToken(ctx.db, userId, input.name, ctx.now());
  ctx.log.info('api token created', { token_id: created.id, name: created.name, origin });
  return created;
}

/** Revokes one of the user's tokens; 404 for another user's or an unknown id. */
export function deleteToken(ctx: CommandCtx, userId: number, id: number, _origin: Origin): void {
  deleteApiToken(ctx.db, userId, id);
}
