// First-run setup and login as functions, shared by the REST endpoints and the web UI's forms: one
// validation, one login limiter (per daemon, so the UI cannot be used to get around the API's limit), one
// place that creates users and sessions.
import { z } from 'zod';
import { createLoginLimiter } from './login-limiter.js';
import { hashPassword, verifyNothing, verifyPassword } from './password.js';
import { conflict, DomainError, unauthenticated } from '../errors.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { createSession } from '../store/sessions.js';
import { createFirstUser, findUserByName, setupRequired, userJson, type PublicUser } from '../store/users.js';
import { parseInput as parse } from '../desired/parse.js';

const usernameSchema = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'must be 1-64 characters of letters, digits, _ . @ -');
export const setupSchema = z.object({ username: usernameSchema, password: z.string().min(10, 'must be at least 10 characters').max(1024) }).strict();
export const loginSchema = z.object({ username: z.string().max(256), password: z.string().max(1024) }).strict();

/** A 429 of the login limiter; carries how long the address must wait (the API sends it as Retry-After). */
export class LoginLimited extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'rate_limited', 'too many failed logins from this address; try again later');
  }
}

export interface AuthFlows {
  /** Creates the first user and a session for it; 409 once a user exists, 400 for a bad name or password. */
  setup(raw: unknown): Promise<{ user: PublicUser; session: string }>;
  /** Checks credentials under the per-address limit; 401 wrong, 429 limited (LoginLimited). */
  login(raw: unknown, address: string): Promise<{ user: PublicUser; session: string }>;
}

export function createAuthFlows(deps: { db: Db; log: Logger; now: () => Date }): AuthFlows {
  const { db } = deps;
  const limiter = createLoginLimiter(() => deps.now().getTime());
  const refuseIfLimited = (address: string) => {
    const waitMs = limiter.blockedFor(address);
    if (waitMs > 0) throw new LoginLimited(Math.ceil(waitMs / 1000));
  };

  return {
    async setup(raw) {
      if (!setupRequired(db)) throw conflict('setup is already done; log in instead');
      const input = parse(setupSchema, raw);
      const user = createFirstUser(db, input.username, await hashPassword(input.password));
      deps.log.info('first user created', { username: user.username });
      return { user, session: createSession(db, user.id, deps.now()) };
    },

    async login(raw, address) {
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
      limiter.forgive(address);
      return { user: userJson(user), session: createSession(db, user.id, deps.now()) };
    },
  };
}
