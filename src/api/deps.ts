import type { EdgeDeps } from '../http/deps.js';

/** What every API sub-app is built from: the edges' shared dependencies. */
export type ApiDeps = EdgeDeps;

/** Hono context variables set by the auth middleware. */
export type ApiEnv = {
  Variables: {
    user: { id: number; username: string; created_at: string };
    authVia: 'session' | 'token';
  };
};
