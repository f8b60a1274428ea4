// What every command (src/desired/*) is given, whichever entry point calls it. Commands take this one
// object and an `origin`; anything derived from config (reserved ports, data paths, images) they compute
// themselves, so no caller can forget a rule by forgetting to pass it.
import type { Config } from '../config.js';
import type { Sealer } from '../crypto.js';
import type { Enqueue } from '../controller/types.js';
import type { Bus } from '../controller/bus.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';

/** Where a change of desired state came from; deploys record it (`origin`), an audit log can reuse it. */
export { ORIGINS, type Origin } from '../store/schema/deploys.js';

export interface CommandCtx {
  db: Db;
  /** Announces the change to the controller (the reconcilers converge it). */
  enqueue: Enqueue;
  /** Tells live viewers (deploy streams) about writes they follow. */
  bus: Bus;
  config: Config;
  sealer: Sealer;
  log: Logger;
  now: () => Date;
  /**
   * True when another process on this host listens on `port` (not svc's own proxy): an app's listener
   * there could never bind (409 `port_in_use`). Absent: svc cannot tell (tests of commands), no check.
   */
  portInUse?: (port: number) => boolean;
}
