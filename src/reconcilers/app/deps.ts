import type { Enqueue } from '../../controller/types.js';
import type { Sealer } from '../../crypto.js';
import type { Bus } from '../../controller/bus.js';
import type { Logger } from '../../log.js';
import type { Proxy } from '../../proxy/proxy.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { Db } from '../../store/db.js';
import type { Probe } from './probe.js';
import type { KillNotes } from './kills.js';
import type { BuildSettings } from '../../build/steps.js';

/** The environment a deploy injects, and the values that must never appear in an event or log. */
export interface DeployEnv {
  env: Record<string, string>;
  secrets: string[];
}

export interface AppReconcilerDeps {
  db: Db;
  bus: Bus;
  runtime: Runtime;
  sealer: Sealer;
  log: Logger;
  /** Pokes other keys (the proxy routes). */
  enqueue: Enqueue;
  /** Rewrites the DNS answers the proxy resolves from every app's live address. */
  dns: { sync(): Promise<void> };
  proxy: Pick<Proxy, 'upstreamRequests'>;
  env: {
    /** App variables plus linked-service variables, decrypted, as a container gets them. */
    resolve(appId: number): DeployEnv;
    /** Required keys with no or an empty value. */
    missingRequired(appId: number): string[];
  };
  probe: Probe;
  now: () => number;
  /** The engine's recent stopping `kill` events (kills.ts); absent: a container leaves the answer at `die`. */
  kills?: KillNotes;
  /** `svc_build`: where checkouts go, the base images, git and tokens; without it nothing is built. */
  build?: BuildSettings;
  settings: {
    network: string;
    /** SVC_DATA_DIR: app volumes live in `volumes/<app>/<name>` under it. */
    dataDir: string;
    instance: string;
    /** 30 s (SPEC.md 8). */
    healthTimeoutMs: number;
    /** How long the proxy may keep answering from its last DNS lookup. */
    dnsRefreshMs: number;
    /** SIGTERM to SIGKILL. */
    stopGraceSeconds: number;
    /** Watch window after a switch (SVC_DEPLOY_WATCH_SECONDS); 0: the old container is removed at once. */
    watchMs: number;
  };
}
