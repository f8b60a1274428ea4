// First-run setup and login as functions, shared by the REST endpoints and the web UI's forms: one
// validation, one login limiter (per daemon, so the UI cannot be used to get around the API's limit), one
// place that creates users and sessions.
import { z } from 'zod';
import { createLoginLimiter } from '../auth/login-limiter.js';
import { hashPassword, verifyNothing, verifyPassword } from '../auth/password.js';
import { conflict, DomainError, unauthenticated } from '../errors.js';
import type { Logger } from '../log.js';
import type { Sealer } from '../crypto.js';
import { createSecondFactorCheck } from '../auth/totp.js';
import type { Db } from '../store/db.js';
import { createSession } from '../store/sessions.js';
import { findUserByName, setupRequired, userJson, type PublicUser, type UserRow } from '../store/users.js';
import { createFirstUser, passwordSchema, usernameSchema } from '../desired/users.js';
import { parseInput as parse } from '../desired/parse.js';

export const setupSchema = z.object({ username: usernameSchema, password: passwordSchema }).strict();
export const loginSchema = z
  .object({
    username: z.string().max(256),
    password: z.string().max(1024),
    /** The 6-digit code of the user's authenticator app, when they have a second factor. */
    totp: z.string().max(16).optional(),
    /** Or one of their recovery codes (each works once). */
    recovery_code: z.string().max(64).optional(),
  })
  .strict();

/** A 429 of the login limiter; carries how long the address must wait (the API sends it as Retry-After). */
export class LoginLimited extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'rate_limited', 'too many failed logins from this address; try again later');
  }
}

export interface AuthFlows {
  /** Creates the first user and a session for it; 409 once a user exists, 400 for a bad name or password. */
  setup(raw: unknown): Promise<{ user: PublicUser; session: string }>;
  /**
   * Checks credentials and, for a user with one, the second factor, under the per-address limit: 401
   * wrong (`totp_required` when only the code is missing or wrong), 429 limited (LoginLimited).
   */
  login(raw: unknown, address: string, userAgent?: string): Promise<{ user: PublicUser; session: string }>;
  /** Checks a second factor of a user who has one (single use: a TOTP code once per window, a recovery code once). */
  secondFactor(user: UserRow, input: { totp?: string; recovery_code?: string }): boolean;
}

export function createAuthFlows(deps: { db: Db; log: Logger; now: () => Date; sealer: Sealer }): AuthFlows {
  const { db } = deps;
  const secondFactorOk = createSecondFactorCheck(deps);
  const limiter = createLoginLimiter(() => deps.now().getTime());
  const refuseIfLimited = (address: string) => {
    const waitMs = limiter.blockedFor(address);
    if (waitMs > 0) throw new LoginLimited(Math.ceil(waitMs / 1000));
  };

  return {
    secondFactor: secondFactorOk,
    async setup(raw) {
      if (!setupRequired(db)) throw conflict('setup is already done; log in instead');
      const input = parse(setupSchema, raw);
      const user = createFirstUser(deps, input.username, await hashPassword(input.password));
      deps.log.info('first user created', { username: user.username });
      return { user, session: createSession(db, user.id, deps.now()) };
    },

    async login(raw, address, userAgent) {
      refuseIfLimited(address);
      const input = parse(loginSchema, raw);
      // Checked again and counted as a failure in the same synchronous step, before the (slow) password
      // check, then forgiven on success: parallel guesses cannot all slip in under the limit.
      refuseIfLimited(address);
      limiter.fail(address);
      const user = findUserByName(db, input.username);
      const ok = user ? await verifyPassword(input.password, user.passwordHash) : await verifyNothing(input.password);
      if (!user || !ok) {
        deps.log.warn('login failed', { address });
        throw unauthenticated('wrong username or password');
      }
      // The failure counted above stays counted until the second factor is right too: a missing or wrong
      // code is a failed login for the limiter, so the answer cannot be used to test passwords unthrottled.
      if (!secondFactorOk(user, input)) {
        deps.log.warn('login second factor missing or wrong', { address });
        throw new DomainError('unauthenticated', 'totp_required', input.totp || input.recovery_code ? 'wrong authentication code' : 'enter the code of your authenticator app (or a recovery code)');
      }
      limiter.forgive(address);
      return { user: userJson(user), session: createSession(db, user.id, deps.now(), { address, userAgent }) };
    },
  };
}
