import type { Config } from '../../config.js';
import type { Sealer } from '../../crypto.js';
import type { Logger } from '../../log.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { Bus } from '../../controller/bus.js';
import type { Db } from '../../store/db.js';
import type { FetchFn } from './garage-admin.js';
import type { Enqueue } from '../../controller/types.js';

/** What the service reconciler is built from (constructor injection; tests pass fakes of the ports). */
export interface ServiceReconcilerDeps {
  db: Db;
  /** Where a status change's notice is told (src/notify/raise.ts). */
  bus: Bus;
  runtime: Runtime;
  sealer: Sealer;
  log: Logger;
  now: () => number;
  /**
   * The configured image per type (`SVC_IMAGE_<TYPE>`). A service that never became active is created
   * from it, so a corrected variable helps a service whose image could not be pulled. Absent: the row's image.
   */
  images?: Config['images'];
  settings: {
    network: string;
    instance: string;
    /** SVC_DATA_DIR; service data dirs live under `<dataDir>/services/`. */
    dataDir: string;
  };
  /** Status code of `GET url`, undefined when nothing answered (default: node:http, no keep-alive). */
  httpGet?: (url: string, timeoutMs: number) => Promise<number | undefined>;
  /** TCP connect check that gates exec readiness commands (default: node:net). */
  tcpOpen?: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
  /** Enqueues the app keys of the redeploys an upgrade's switch makes (main.ts passes the manager's). */
  enqueue?: Enqueue;
  /** HTTP client for Garage's admin API (default: global fetch). */
  fetch?: FetchFn;
}
