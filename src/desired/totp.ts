// The second factor's commands (docs/api.md "Teams"): setting up is two steps: `begin` stores a pending
// secret and shows it (and its QR code), `confirm` proves the app has it and only then turns the factor on
// and hands out the recovery codes, once; `clear` takes it away (the user's choice or an admin's reset).
// Checking a code at login is src/auth/totp.ts.
import { eq } from 'drizzle-orm';
import * as OTPAuth from 'otpauth';
import { z } from 'zod';
import { sha256Hex } from '../crypto.js';
import { conflict, invalid, notFound } from '../errors.js';
import { newRecoveryCode, normaliseCode, RECOVERY_CODE_COUNT, totpOf, totpStep } from '../auth/totp.js';
import { tx } from '../store/db.js';
import { recoveryCodes, users } from '../store/schema/index.js';
import { iso } from '../store/sessions.js';
import type { UserRow } from '../store/users.js';
import type { CommandCtx } from './context.js';
import { parseInput } from './parse.js';

type Ctx = Pick<CommandCtx, 'db' | 'sealer' | 'now'>;

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
export function clearTotp(ctx: Pick<CommandCtx, 'db'>, userId: number): void {
  const { db } = ctx;
  tx(db, () => {
    const r = db.update(users).set({ totpSecretSealed: null, totpEnabledAt: null }).where(eq(users.id, userId)).run();
    if (r.changes === 0) throw notFound('user');
    db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
  });
}
