// The second factor (docs/api.md "Teams"): TOTP (RFC 6238, by `otpauth`: SHA-1, 6 digits, 30 s, one step of
// clock drift either way) and ten single-use recovery codes stored as SHA-256 (they carry 80 random bits,
// so a fast hash is enough). The secret is sealed at rest like every credential. Setting up is two steps:
// `begin` stores a pending secret and shows it (and its QR code), `confirm` proves the app has it and only
// then turns the factor on and hands out the recovery codes, once.
import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import { z } from 'zod';
import { sha256Hex, type Sealer } from '../crypto.js';
import { conflict, invalid, notFound } from '../errors.js';
import { parseInput } from '../desired/parse.js';
import { tx, type Db } from '../store/db.js';
import { recoveryCodes, users } from '../store/schema/index.js';
import { iso } from '../store/sessions.js';
import type { UserRow } from '../store/users.js';

export const RECOVERY_CODE_COUNT = 10;
const ISSUER = 'svc';

type Ctx = { db: Db; sealer: Sealer; now: () => Date };

const totpOf = (username: string, secretBase32: string) =>
  new OTPAuth.TOTP({ issuer: ISSUER, label: username, algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secretBase32) });

/** The time step a code is valid for, or undefined; one step of drift either way is accepted. */
export function totpStep(username: string, secretBase32: string, code: string, now: Date): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(username, secretBase32).validate({ token: code, timestamp: now.getTime(), window: 1 });
  return delta === null ? undefined : Math.floor(now.getTime() / 30_000) + delta;
}

/** A recovery code: 16 characters of base32 in four groups, about 80 bits. */
function newRecoveryCode(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
  return chars.match(/.{4}/g)!.join('-');
}

/** How a typed recovery code is compared: case, spaces and dashes do not matter. */
const normaliseCode = (code: string) => code.toUpperCase().replace(/[^A-Z0-9]/g, '');

export interface TotpSetup {
  secret: string;
  otpauth_url: string;
  /** The otpauth URL as an SVG QR code, rendered on the server (no script, no third party). */
  qr_svg: string;
}

/** Starts (or restarts) setting up a second factor: a new pending secret; 409 once one is in force. */
export async function beginTotp(ctx: Ctx, user: UserRow): Promise<TotpSetup> {
  if (user.totpEnabledAt) throw conflict('a second factor is already set up; turn it off first to replace it');
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  ctx.db.update(users).set({ totpSecretSealed: ctx.sealer.seal(secret) }).where(eq(users.id, user.id)).run();
  return setupOf(user.username, secret);
}

async function setupOf(username: string, secret: string): Promise<TotpSetup> {
  const url = totpOf(username, secret).toString();
  // Loaded at the first second-factor setup (~10 MiB otherwise never needed).
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, otpauth_url: url, qr_svg: svg };
}

/** The setup in progress (begun, not confirmed), to show again after a wrong code; undefined when none. */
export async function pendingTotp(ctx: Ctx, user: UserRow): Promise<TotpSetup | undefined> {
  if (user.totpEnabledAt || !user.totpSecretSealed) return undefined;
  return setupOf(user.username, ctx.sealer.open(user.totpSecretSealed));
}

export const codeSchema = z.object({ code: z.string().trim().min(1).max(64) }).strict();

/** Turns the pending factor on when `code` is right, and returns the ten recovery codes (shown this once). */
export function confirmTotp(ctx: Ctx, user: UserRow, raw: unknown): { recovery_codes: string[] } {
  const { code } = parseInput(codeSchema, raw);
  if (user.totpEnabledAt) throw conflict('a second factor is already set up');
  if (!user.totpSecretSealed) throw conflict('start the setup first (POST /api/account/totp)');
  const secret = ctx.sealer.open(user.totpSecretSealed);
  if (totpStep(user.username, secret, code, ctx.now()) === undefined) {
    throw invalid('code: wrong or expired code; check the device clock and try the next one', { issues: [{ path: 'code', message: 'wrong code' }] });
  }
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  tx(ctx.db, () => {
    ctx.db.update(users).set({ totpEnabledAt: iso(ctx.now()) }).where(eq(users.id, user.id)).run();
    ctx.db.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id)).run();
    for (const c of codes) ctx.db.insert(recoveryCodes).values({ userId: user.id, codeHash: sha256Hex(normaliseCode(c)) }).run();
  });
  return { recovery_codes: codes };
}

/** Removes the user's second factor and recovery codes (their own choice with a valid code, or an admin's reset). */
export function clearTotp(db: Db, userId: number): void {
  tx(db, () => {
    const r = db.update(users).set({ totpSecretSealed: null, totpEnabledAt: null }).where(eq(users.id, userId)).run();
    if (r.changes === 0) throw notFound('user');
    db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
  });
}

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
