// Team-wide settings an owner sets (docs/api.md "Teams"): whether admins and owners must use a second factor.
import { z } from 'zod';
import { eq, sql } from 'drizzle-orm';
import { perDb } from '../store/prepared.js';
import { parseInput } from './parse.js';
import type { Db } from '../store/db.js';
import { settings } from '../store/schema/index.js';
import { iso } from '../store/sessions.js';
import type { CommandCtx } from './context.js';

const KEY = 'teams.require_totp_for_admins';

export interface TeamSettings {
  require_totp_for_admins: boolean;
}

export const teamSettingsSchema = z.object({ require_totp_for_admins: z.boolean() }).strict();

// Prepared once per database: the permission middleware asks on every request of an owner or admin
// without a second factor.
const settingOf = perDb((db) => db.select({ value: settings.value }).from(settings).where(eq(settings.key, sql.placeholder('key'))).prepare());

export const teamSettings = (db: Db): TeamSettings => ({
  require_totp_for_admins: settingOf(db).get({ key: KEY })?.value === 'true',
});

/** Sets the team's settings (an owner's PUT /api/team/settings or the users page); returns them as stored. */
export function setTeamSettings(ctx: Pick<CommandCtx, 'db' | 'now'>, raw: unknown): TeamSettings {
  const input = parseInput(teamSettingsSchema, raw);
  const value = String(input.require_totp_for_admins);
  const updatedAt = iso(ctx.now());
  ctx.db.insert(settings).values({ key: KEY, value, updatedAt }).onConflictDoUpdate({ target: settings.key, set: { value, updatedAt } }).run();
  return teamSettings(ctx.db);
}

/** True when `user` must set up a second factor before doing anything but their own account. */
export const mustEnrolTotp = (db: Db, user: { role: string; totp_enabled: boolean }): boolean =>
  !user.totp_enabled && (user.role === 'admin' || user.role === 'owner') && teamSettings(db).require_totp_for_admins;
