import type { Config } from '../config.js';
import type { Sealer } from '../crypto.js';
import type { Enqueue } from '../controller/types.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { Bus } from '../events/bus.js';
import type { Runtime } from '../runtime/runtime.js';
import type { BackupControl } from '../backup/control.js';
import type { CredentialsHolder } from '../codehost/credentials.js';

/** What every API sub-app is built from (constructor injection, no module singletons). */
export interface ApiDeps {
  db: Db;
  sealer: Sealer;
  config: Config;
  log: Logger;
  /** Announces desired-state changes to the controller. */
  enqueue: Enqueue;
  /** Current time; tests pass a fixed or advancing clock. */
  now: () => Date;
  /** Live notifications for streams (deploy events, log follow); optional in tests that need none. */
  bus?: Bus;
  /** The engine, for reads only (log streams); handlers never change containers. */
  runtime?: Runtime;
  /** Restores (the backup reconciler's work the request waits for); absent in tests that need none. */
  backups?: BackupControl;
  /** The code-host credentials as they are now (the manifest flow replaces them live); default: config's. */
  codehost?: CredentialsHolder;
}

/** Hono context variables set by the auth middleware. */
export type ApiEnv = {
  Variables: {
    user: { id: number; username: string; created_at: string };
    authVia: 'session' | 'token';
  };
};
