import type { Config } from '../config.js';
import type { ComposeLoader } from '../desired/stacks.js';
import type { Sealer } from '../crypto.js';
import type { Enqueue } from '../controller/types.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { Bus } from '../controller/bus.js';
import type { Runtime } from '../runtime/runtime.js';
import type { BackupControl } from '../backup/control.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import type { MetricsSnapshot } from '../metrics/collector.js';
import type { TerminalPort } from '../runtime/terminal.js';

/**
 * What the HTTP edges (the REST API and the UI) are built from (constructor injection, no module
 * singletons). It is a superset of the commands' context (src/desired/context.ts): handlers pass it on.
 */
export interface EdgeDeps {
  db: Db;
  sealer: Sealer;
  config: Config;
  log: Logger;
  /** Announces desired-state changes to the controller. */
  enqueue: Enqueue;
  /** Current time; tests pass a fixed or advancing clock. */
  now: () => Date;
  /** Live notifications: deploy events for streams, superseded deploys. Tests pass a real Bus too. */
  bus: Bus;
  /** The engine, for reads only (log streams); handlers never change containers. */
  runtime?: Runtime;
  /** Restores (the backup reconciler's work the request waits for); absent in tests that need none. */
  backups?: BackupControl;
  /** The code-host credentials as they are now (the manifest flow replaces them live); default: config's. */
  codehost?: CredentialsHolder;
  /** The metrics collector's last round (svc top, /metrics); absent where no collector runs. */
  metrics?: () => MetricsSnapshot | undefined;
  /** Interactive exec sessions into app containers (the terminal); absent in tests that need none. */
  terminal?: TerminalPort;
  /** The commands' port check (CommandCtx.portInUse); absent in tests that need none. */
  portInUse?: (port: number) => boolean;
  /** Reads a Compose file (src/stacks/compose/load.ts); absent: stacks answer 503. */
  loadCompose?: ComposeLoader;
}
