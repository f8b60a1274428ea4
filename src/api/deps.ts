import type { AuthVars } from '../http/authorize.js';
import type { EdgeDeps } from '../http/deps.js';

/** What every API sub-app is built from: the edges' shared dependencies. */
export type ApiDeps = EdgeDeps;

/** Hono context variables set by the auth middleware. */
export type ApiEnv = { Variables: AuthVars };
