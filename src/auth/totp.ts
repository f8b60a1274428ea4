// The second factor as login checks it (docs/api.md "Teams"): TOTP (RFC 6238, by `otpauth`: SHA-1, 6 digits, 30 s, one step of
// clock drift either way) and ten single-use recovery codes stored as SHA-256 (they carry 80 random bits,
// so a fast hash is enough). The secret is sealed at rest like every credential. Setting it up, turning it
// on and off are commands: src/desired/totp.ts.
import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import { sha256Hex, type Sealer } from '../crypto.js';
import type { Db } from '../store/db.js';
import { recoveryCodes } from '../store/schema/index.js';
import { iso } from '../store/sessions.js';
import type { UserRow } from '../store/users.js';

export const RECOVERY_CODE_COUNT = 10;
const ISSUER = 'svc';

type Ctx = { db: Db; sealer: Sealer; now: () => Date };

/** The TOTP of a user's secret (the commands in desired/totp.ts show its URL; login checks its codes). */
export const totpOf = (username: string, secretBase32: string) =>
  new OTPAuth.TOTP({ issuer: ISSUER, label: username, algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secretBase32) });

/** The time step a code is valid for, or undefined; one step of drift either way is accepted. */
export function totpStep(username: string, secretBase32: string, code: string, now: Date): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(username, secretBase32).validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? undefined : Math.floor(now.getTime() / 30_000) + delta;
}

/** A recovery code: 16 characters of base32 in four groups, about 80 bits. */
export function newRecoveryCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** How a typed recovery code is compared: case, spaces and dashes do not matter. */
export const normaliseCode = (code: string) => code.toUpperCase().replace(/[^A-Z0-9]/g, '');

/** Uses up one recovery code of the user; true when it was valid and unused (then it never works again). */
export function useRecoveryCode(db: Db, userId: number, code: string, now: Date): boolean {
  const r = db
    .update(recoveryCodes)
    .set({ usedAt: iso(now) })
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, sha256Hex(normaliseCode(code))), isNull(recoveryCodes.usedAt)))
    .run();
  return r.changes > 0;
}

/** Recovery codes the user has left. */
export const recoveryCodesLeft = (db: Db, userId: number): number =>
  db.select().from(recoveryCodes).where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt))).all().length;

/**
 * Checks a second factor for a user who has one: a TOTP code not used before (a code seen once is
 * refused for the rest of its window), or an unused recovery code.
 */
export function createSecondFactorCheck(ctx: Ctx) {
  const lastStep = new Map<number, number>();
  return (user: UserRow, input: { totp?: string; recovery_code?: string }): boolean => {
    if (!user.totpEnabledAt || !user.totpSecretSealed) return true;
    if (input.totp) {
      const step = totpStep(user.username, ctx.sealer.open(user.totpSecretSealed), input.totp.trim(), ctx.now());
      if (step === undefined || step <= (lastStep.get(user.id) ?? -1)) return false;
      lastStep.set(user.id, step);
      return true;
    }
    if (input.recovery_code) return useRecoveryCode(ctx.db, user.id, input.recovery_code, ctx.now());
    return false;
  };
}
