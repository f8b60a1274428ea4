// Composition root: config, store, adapters, controller, API. Nothing else lives here.
import { serve, type ServerType } from '@hono/node-server';
import type { Config } from './config.js';
import { createSealer } from './crypto.js';
import { createLogger, type Logger } from './log.js';
import { openDb, type Db } from './store/db.js';
import { createApi } from './api/app.js';
import { createManager, type Manager } from './controller/manager.js';
import { createDockerRuntime } from './runtime/docker.js';
import type { Runtime } from './runtime/runtime.js';

export interface Daemon {
  db: Db;
  url: string;
  /** The engine adapter and the controller; reconcilers are added with `manager.register(...)`. */
  runtime: Runtime;
  manager: Manager;
  stop(): Promise<void>;
}

export async function startDaemon(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Daemon> {
  const db = openDb(config.dbPath);
  const sealer = createSealer(config.encryptionKey);
  const runtime = createDockerRuntime({ dockerHost: config.dockerHost, log });
  const manager = createManager({
    runtime,
    instance: config.instance,
    log,
    resyncMs: config.resyncMs,
    engine: config.dockerHost ?? 'unix:///var/run/docker.sock',
  });
  const enqueue = manager.enqueue;
  const api = createApi({ db, sealer, config, log, enqueue, now: () => new Date() });

  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: api.fetch, port: config.port, hostname: config.host }, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('svc listening', { port, data_dir: config.dataDir });
  // After the API: an unreachable engine only logs and retries, it never keeps the API down.
  manager.start();

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('svc stopping');
      // Stop accepting, let in-flight requests finish (long-lived streams are closed after a grace period).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        }, 5_000);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      });
      await manager.stop();
      db.$client.close();
      log.info('svc stopped');
    })());
  return { db, url: `http://127.0.0.1:${port}`, runtime, manager, stop };
}
