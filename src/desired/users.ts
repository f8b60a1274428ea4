// The users commands (docs/api.md "Teams"): the first owner at setup, invitations (a single-use link that expires), role and app
// changes, removal, and changing one's own password. The rules that are about people, not routes, live
// here: only an owner creates, changes or removes owners; the last owner stays; app limits are for
// developers. Removing a user deletes their sessions and tokens with the row (foreign-key cascade), so
// their next request is refused.
import { and, asc, eq, gt, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { randomToken, sha256Hex } from '../crypto.js';
import { conflict, DomainError, forbidden, invalid, notFound, unauthenticated } from '../errors.js';
import { mayAssign, ROLES, type Role } from '../auth/permissions.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { parseInput } from './parse.js';
import { tx } from '../store/db.js';
import { invitations, users } from '../store/schema/index.js';
import { createSession, deleteOtherSessions, iso } from '../store/sessions.js';
import { countOwners, findUser, findUserByName, setupRequired, userJson, type PublicUser } from '../store/users.js';
import type { CommandCtx } from './context.js';

/** The part of CommandCtx these commands use (people are not reconciled: nothing to enqueue). */
type Ctx = Pick<CommandCtx, 'db' | 'now'>;
const HOUR_MS = 60 * 60 * 1000;

export const usernameSchema = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'must be 1-64 characters of letters, digits, _ . @ -');
export const passwordSchema = z.string().min(10, 'must be at least 10 characters').max(1024);

/**
 * Creates the first user, an owner (first-run setup). The emptiness check and the insert share one
 * transaction, so two racing setup requests cannot both succeed: the second gets 409.
 */
export function createFirstUser(ctx: Pick<CommandCtx, 'db'>, username: string, passwordHash: string): PublicUser {
  return tx(ctx.db, () => {
    if (!setupRequired(ctx.db)) throw conflict('setup is already done; log in instead');
    return userJson(ctx.db.insert(users).values({ username, passwordHash, role: 'owner' }).returning().get());
  });
}

const appsSchema = z.array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be an app name')).max(200).nullable();

/** App limits make sense for developers only: the other roles read everything, and admins manage all. */
function checkApps(role: Role, apps: string[] | null | undefined) {
  if (apps && role !== 'developer') throw invalid('apps: only a developer can be limited to some apps', { issues: [{ path: 'apps', message: 'developers only' }] });
}

function refuseUnlessMayAssign(actor: PublicUser, role: Role) {
  if (!mayAssign(actor.role, role)) throw forbidden('forbidden', 'only an owner can give, change or take away the owner role');
}

export const inviteSchema = z
  .object({
    role: z.enum(ROLES),
    apps: appsSchema.optional(),
    /** How long the link works: 1 hour to 30 days, 72 hours by default. */
    expires_in_hours: z.number().int().min(1).max(720).default(72),
  })
  .strict();

export interface InvitationJson {
  id: number;
  role: Role;
  apps: string[] | null;
  created_by: string;
  created_at: string;
  expires_at: string;
}

const invitationJson = (i: typeof invitations.$inferSelect): InvitationJson => ({
  id: i.id,
  role: i.role,
  apps: i.apps ?? null,
  created_by: i.createdBy,
  created_at: i.createdAt,
  expires_at: i.expiresAt,
});

/** Creates an invitation; the token (the link's last part) is in this answer only. */
export function createInvitation(ctx: Ctx, actor: PublicUser, raw: unknown): InvitationJson & { token: string; path: string } {
  const input = parseInput(inviteSchema, raw);
  refuseUnlessMayAssign(actor, input.role);
  checkApps(input.role, input.apps);
  const token = randomToken(32);
  const now = ctx.now();
  const row = ctx.db
    .insert(invitations)
    .values({ tokenHash: sha256Hex(token), role: input.role, apps: input.apps ?? null, createdBy: actor.username, createdAt: iso(now), expiresAt: iso(new Date(now.getTime() + input.expires_in_hours * HOUR_MS)) })
    .returning()
    .get();
  return { ...invitationJson(row), token, path: `/invite/${token}` };
}

/** Invitations not used and not expired, oldest first. */
export const listInvitations = (ctx: Ctx): InvitationJson[] =>
  ctx.db
    .select()
    .from(invitations)
    .where(and(isNull(invitations.usedAt), gt(invitations.expiresAt, iso(ctx.now()))))
    .orderBy(asc(invitations.id))
    .all()
    .map(invitationJson);

export function deleteInvitation(ctx: Ctx, id: number): void {
  if (ctx.db.delete(invitations).where(eq(invitations.id, id)).run().changes === 0) throw notFound('invitation');
}

/** The usable invitation of a link token, or undefined (unknown, used or expired: all look the same). */
export function openInvitation(ctx: Ctx, token: string) {
  const row = ctx.db.select().from(invitations).where(eq(invitations.tokenHash, sha256Hex(token))).get();
  if (!row || row.usedAt || Date.parse(row.expiresAt) <= ctx.now().getTime()) return undefined;
  return row;
}

export const acceptSchema = z.object({ token: z.string().min(1).max(200), username: usernameSchema, password: passwordSchema }).strict();

const invitationGone = () => new DomainError('not_found', 'invitation_invalid', 'this invitation link is unknown, already used or expired; ask for a new one');

/**
 * Creates the invited account and a session for it. Marking the link used and creating the user share one
 * transaction: a link works once, and a taken username (409) leaves the link usable.
 */
export async function acceptInvitation(ctx: Ctx, raw: unknown, from: { address?: string; userAgent?: string }): Promise<{ user: PublicUser; session: string }> {
  const input = parseInput(acceptSchema, raw);
  if (!openInvitation(ctx, input.token)) throw invitationGone();
  const passwordHash = await hashPassword(input.password);
  return tx(ctx.db, () => {
    const inv = openInvitation(ctx, input.token);
    if (!inv) throw invitationGone();
    if (findUserByName(ctx.db, input.username)) throw conflict('this username is taken; choose another');
    const row = ctx.db.insert(users).values({ username: input.username, passwordHash, role: inv.role, apps: inv.apps ?? null }).returning().get();
    ctx.db.update(invitations).set({ usedAt: iso(ctx.now()), usedBy: row.username }).where(eq(invitations.id, inv.id)).run();
    return { user: userJson(row), session: createSession(ctx.db, row.id, ctx.now(), from) };
  });
}

export const updateUserSchema = z.object({ role: z.enum(ROLES).optional(), apps: appsSchema.optional() }).strict();

/** Changes a user's role or app limits. Only an owner touches owners; the last owner stays an owner. */
export function updateUser(ctx: Ctx, actor: PublicUser, id: number, raw: unknown): PublicUser {
  const input = parseInput(updateUserSchema, raw);
  return tx(ctx.db, () => {
    const target = findUser(ctx.db, id);
    if (!target) throw notFound('user');
    const role = input.role ?? target.role;
    refuseUnlessMayAssign(actor, target.role);
    refuseUnlessMayAssign(actor, role);
    const apps = role === 'developer' ? (input.apps !== undefined ? input.apps : (target.apps ?? null)) : null;
    if (role !== 'developer') checkApps(role, input.apps);
    if (target.role === 'owner' && role !== 'owner' && countOwners(ctx.db) === 1) throw conflict('the last owner cannot be demoted; make someone else an owner first');
    return userJson(ctx.db.update(users).set({ role, apps }).where(eq(users.id, id)).returning().get());
  });
}

/** Removes a user: their sessions, tokens and recovery codes go with the row, so they are out at once. */
export function removeUser(ctx: Ctx, actor: PublicUser, id: number): { username: string } {
  return tx(ctx.db, () => {
    const target = findUser(ctx.db, id);
    if (!target) throw notFound('user');
    refuseUnlessMayAssign(actor, target.role);
    if (target.role === 'owner' && countOwners(ctx.db) === 1) throw conflict('the last owner cannot be removed');
    ctx.db.delete(users).where(eq(users.id, id)).run();
    return { username: target.username };
  });
}

export const passwordChangeSchema = z.object({ current_password: z.string().max(1024), new_password: passwordSchema }).strict();

/** Changes one's own password after checking the current one; every other session of the user ends. */
export async function changePassword(ctx: Ctx, userId: number, currentSessionId: number | undefined, raw: unknown): Promise<void> {
  const input = parseInput(passwordChangeSchema, raw);
  const user = findUser(ctx.db, userId);
  if (!user) throw notFound('user');
  if (!(await verifyPassword(input.current_password, user.passwordHash))) throw unauthenticated('the current password is wrong');
  const passwordHash = await hashPassword(input.new_password);
  tx(ctx.db, () => {
    ctx.db.update(users).set({ passwordHash }).where(eq(users.id, userId)).run();
    deleteOtherSessions(ctx.db, userId, currentSessionId);
  });
}
