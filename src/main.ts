// Composition root: config, store, adapters, controller, and the HTTP server (server.ts). Nothing else lives here.
import type { ComposeLoader } from './desired/stacks.js';
import { loadCompose } from './stacks/compose/load.js';
import { serve, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { withInstance, type Config } from './config.js';
import { createSealer } from './crypto.js';
import { createLogger, type Logger } from './log.js';
import { openDb, type Db } from './store/db.js';
import { createNodeReconciler } from './reconcilers/nodes/reconciler.js';
import { rebaseServices, sealMissingGarageKeys } from './store/services.js';
import { resolveInstance } from './store/instance.js';
import { sweepCheckouts } from './build/sweep.js';
import { createServer } from './server.js';
import { createManager, type Manager } from './controller/manager.js';
import { keyOf } from './controller/types.js';
import { wireRuntime, type RuntimeWiring } from './wiring/runtime.js';
import { registryAuthLookup } from './desired/registries.js';
import type { Runtime } from './runtime/runtime.js';
import { Bus } from './controller/bus.js';
import { verifyEncryptionKey } from './store/encryption-check.js';
import { missingRequired } from './store/env.js';
import { deployEnv } from './store/deploy-env.js';
import { createCaddyProxy } from './proxy/caddy.js';
import { createSharedCaddyProxy } from './proxy/caddy-shared.js';
import { createHeldPorts, createPortInUse, proxyIsLocal, type HeldPorts } from './proxy/held-ports.js';
import { listeningPorts } from './proxy/listening.js';
import { DNS_REFRESH_MS } from './proxy/config.js';
import { createProxyRunner } from './proxy/runner.js';
import { caddyIdentity, trustedProxy } from './proxy/trust.js';
import { checkDnsPort, createDnsSupervisor } from './dns/supervise.js';
import { dnsmasqPaths } from './dns/dnsmasq.js';
import { writeHostsDir } from './dns/hosts.js';
import { createDnsSync } from './reconcilers/proxy/dns-sync.js';
import { createProxyReconciler } from './reconcilers/proxy/reconciler.js';
import { createAppReconciler } from './reconcilers/app/reconciler.js';
import { createStackReconciler } from './reconcilers/stack/reconciler.js';
import { createKillNotes, type KillNotes } from './reconcilers/app/kills.js';
import { createJobsReconciler } from './reconcilers/jobs/reconciler.js';
import { createServiceReconciler } from './reconcilers/service/reconciler.js';
import { createServiceBackupReconciler } from './reconcilers/service-backup/reconciler.js';
import { ageKeyOf, wireBackups } from './wiring/backups.js';
import { createGate, gatedManager } from './backup/quiesce.js';
import { createPreviewSweep } from './reconcilers/previews/reconciler.js';
import { wirePreviewReports } from './wiring/preview-reports.js';
import { wireManifests } from './wiring/manifests.js';
import { join } from 'node:path';
import { credentialsHolder, type CredentialsHolder } from './codehost/credentials.js';
import { createCodehostClient } from './codehost/client.js';
import { installationTokenFor } from './codehost/tokens.js';
import { createCollector } from './metrics/collector.js';
import { createDockerStats } from './runtime/docker-stats.js';
import { createCgroupStats } from './runtime/cgroup-stats.js';
import { systemClock } from './controller/clock.js';
import { listServices } from './store/services.js';
import { createDispatcher } from './notify/dispatcher.js';
import { watchDisk } from './notify/disk.js';
import { createNodeWatch, NODES_KEY } from './cluster/node-watch.js';
import { watchCertificates } from './certs/watch.js';
import { messageBaseUrl } from './notify/base-url.js';

export interface Daemon {
  db: Db;
  url: string;
  /** The engine adapter and the controller; reconcilers are added with `manager.register(...)`. */
  runtime: Runtime;
  manager: Manager;
  stop(): Promise<void>;
}

/** `now`: the jobs scheduler's clock (tests move it to fire cron times without waiting); default the wall clock. */
export async function startDaemon(given: Config, log: Logger = createLogger(given.logLevel), opts: { now?: () => number; /** Tests only: another Compose loader than src/stacks/compose/. */ loadCompose?: ComposeLoader } = {}): Promise<Daemon> {
  const db = openDb(given.dbPath);
  const sealer = createSealer(given.encryptionKey);
  // A wrong key would make every sealed value unreadable: refuse to start rather than corrupt data.
  verifyEncryptionKey(db, sealer);
  // The data directory's identity, before anything names, labels or looks for a container.
  const identity = resolveInstance(db, given.instanceOverride);
  const config = withInstance(given, identity.instance);
  log.info('instance identity', { instance: config.instance, from: identity.source, network: config.network });
  // A DNS port another live instance holds: stop here with one line naming SVC_DNS_PORT, rather than
  // deploy `success` while the proxy resolves this instance's apps through the other one's answers.
  try {
    await checkDnsPort(config.dataDir, config.proxy.dnsPort);
  } catch (err) {
    db.$client.close();
    throw err;
  }
  const rebased = rebaseServices(db, config);
  sealMissingGarageKeys(db, sealer);
  if (rebased) log.info('service rows moved to this data directory and instance', { services: rebased, data_dir: config.dataDir, instance: config.instance });
  const wired = wireRuntime(config, log, registryAuthLookup(db, sealer));
  const runtime = wired.runtime;
  log.info('runtime', { SVC_RUNTIME: config.runtime.kind });
  // Stopping signals sent to app containers: a replica leaves the DNS answer at once (kills.ts).
  const kills = createKillNotes(Date.now);
  // Which Caddy runs (host Caddy pid, proxy container events): the proxy pass trusts Caddy's last answer while it stays the same.
  const caddy = caddyIdentity({ dataDir: config.dataDir, instance: config.instance });
  const manager = createManager({
    runtime,
    instance: config.instance,
    onEvent: (ev) => {
      kills.note(ev);
      caddy.note(ev);
    },
    log,
    resyncMs: config.resyncMs,
    engine: config.dockerHost ?? 'unix:///var/run/docker.sock',
    onNodesChanged: () => {
      // Node down/up as stored events and notifications: the key `nodes:events` (cluster/node-watch.ts).
      manager.enqueue(NODES_KEY);
      // A node joined, left or changed state: the node agents follow (a Swarm only).
      if (wired.agents) manager.enqueue(keyOf('agents', 'main'));
      // ... and the edge nodes (a node's svc.edge label changed, or an edge node joined or left).
      if (wired.edges) manager.enqueue(keyOf('edges', 'main'));
    },
  });
  const bus = new Bus();
  manager.register(createNodeWatch({ db, bus, runtime, log }));
  const enqueue = manager.enqueue;
  // The code-host credentials as they are now: the manifest flow replaces them while the daemon runs.
  const codehost = credentialsHolder(config.codehost);
  // Every other reconciler goes behind the backup gate, so a restore swaps state while none of them acts.
  const gate = createGate();
  await sweepCheckouts(db, join(config.dataDir, 'builds'), log);
  // The ports the proxy holds, and the host's listening ports: the port_in_use check of app commands and
  // the proxy reconciler's pre-check. Only for a Caddy on this host (its admin API on loopback).
  const held = createHeldPorts();
  const local = proxyIsLocal(config.proxy.adminUrl);
  const portInUse = local ? createPortInUse(held) : undefined;
  registerReconcilers({ config, db, sealer, log, runtime, probes: wired, manager: gatedManager(manager, gate), bus, codehost, held: local ? held : undefined, now: opts.now ?? Date.now, kills, caddyIdentity: caddy.identity });
  // Not behind the backup gate: the agents are Swarm services, no state a restore swaps.
  if (wired.agents) manager.register(wired.agents);
  if (wired.edges) manager.register(wired.edges);
  // Node changes asked through the API (availability, labels): Swarm state too, not behind the gate.
  manager.register(createNodeReconciler({ db, runtime, bus, log }));
  const backups = wireBackups({ config, db, sealer, log, runtime, manager, gate, bus });
  // Per-service backups, copies and restores (issue 33): behind the gate, a full restore swaps their services' data.
  gatedManager(manager, gate).register(
    createServiceBackupReconciler({ db, runtime, sealer, log, dataDir: config.dataDir, backupDir: config.backupDir, enqueue: manager.enqueue, now: Date.now, changed: backups.control.progress.changed, settings: { age: ageKeyOf(config), retrySeconds: config.offsite.retrySeconds } }),
  );
    const manifests = wireManifests({ config, db, sealer, log, manager: gatedManager(manager, gate), bus, loadCompose: opts.loadCompose ?? loadCompose });
  // Observed resource use: a loop of its own beside the reconcilers (issue 22 "Metrics").
  const collector = createCollector({
    db,
    // The kernel's files where the engine is local (about 1/40 of the engine's one-shot stats, measured),
    // the engine's one-shot stats for any container whose files are not here.
    source: createCgroupStats(wired.docker, createDockerStats(wired.docker, config.instance)),
    log,
    clock: systemClock,
    dataDir: config.dataDir,
    intervalMs: config.metricsIntervalMs,
    serviceIds: () => new Map(listServices(db).map((s) => [s.name, s.id])),
  });
  const terminal = wired.terminal;
  const api = createServer({ db, sealer, config, log, enqueue, bus, runtime, codehost, now: () => new Date(), backups: backups.control, portInUse, metrics: collector.latest, terminal, loadCompose: opts.loadCompose ?? loadCompose });

  // WebSockets (the terminal) on the daemon's own port: @hono/node-server upgrades onto this ws server.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const server: ServerType = await new Promise((resolve, reject) => {
    const failed = (err: Error) => {
      db.$client.close();
      reject(new Error(`cannot listen on ${config.host}:${config.port}: ${err.message}`));
    };
    const s = serve({ fetch: api.fetch, port: config.port, hostname: config.host, websocket: { server: wss } }, () => {
      s.off('error', failed);
      // After listening, a server error concerns one connection: log it, keep serving.
      s.on('error', (err) => log.error('http server error', { error: err }));
      resolve(s);
    });
    s.once('error', failed);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('svc listening', { port, data_dir: config.dataDir, instance: config.instance });
  // After the API: an unreachable engine only logs and retries, it never keeps the API down.
  manager.start();
  collector.start();
  // Housekeeping as keys of the same queue (no timers of their own): the hourly preview sweep.
  manager.register(createPreviewSweep({ db, sealer, config, log, enqueue, bus, now: () => new Date(), portInUse }));
  const previewReports = wirePreviewReports({ db, bus, log, config, codehost, sealer, port });
  // Notifications: the outbox is sent from here; what an earlier process left pending goes out now.
  const dispatcher = createDispatcher({ db, sealer, log, baseUrl: () => messageBaseUrl(config.publicUrl, config.host, port), enqueue, bus });
  manager.register(dispatcher);
  manager.register(createStackReconciler({ db, bus, runtime, enqueue, log, settings: { network: config.network, instance: config.instance, dataDir: config.dataDir } }));
  manager.register(watchDisk({ db, bus, dir: config.dataDir, log }));
  // Certificates Caddy cannot get: read from the TLS log Caddy writes (config.proxy.tlsLog).
  if (config.proxy.tlsLog) manager.register(watchCertificates({ db, bus, file: config.proxy.tlsLog.svcPath, log }));

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('svc stopping');
      // Terminal sessions end with the daemon (their exec hangs up); upgraded sockets are not the server's to close.
      for (const ws of wss.clients) ws.terminate();
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
      await collector.stop();
      await previewReports.stop();
      await manifests.stop();
      await manager.stop();
      await dispatcher.stop();
      db.$client.close();
      log.info('svc stopped');
    })());
  return { db, url: `http://127.0.0.1:${port}`, runtime, manager, stop };
}

/** The reconcilers and the adapters they act through. */
function registerReconcilers(d: { config: Config; db: Db; sealer: ReturnType<typeof createSealer>; log: Logger; runtime: Runtime; probes: Pick<RuntimeWiring, 'probe' | 'tcpOpen' | 'serviceFetch' | 'edge' | 'proxyMounts'>; manager: Manager; bus: Bus; codehost: CredentialsHolder; held?: HeldPorts; now: () => number; kills: KillNotes; caddyIdentity: () => string }) {
  const { config, db, sealer, log, runtime, manager, bus } = d;
  // External: a Caddy svc shares, where it owns only its own servers; otherwise a Caddy of its own.
  const proxy = createCaddyProxy({ ...config.proxy, log });
  const { hostsDir } = dnsmasqPaths(config.dataDir);
  // On a Swarm the parts are wrapped so Caddy reaches tasks on the overlay (src/proxy/edge-proxy.ts).
  const edge = d.probes.edge({
    routes: config.proxy.mode === 'external' ? createSharedCaddyProxy({ ...config.proxy, instance: config.instance, log }) : proxy,
    drain: proxy,
    writeDns: (records) => writeHostsDir(hostsDir, records),
    ensureRunning: createProxyRunner({
      mode: config.proxy.mode,
      runtime,
      image: config.proxy.image,
      bin: config.proxy.bin,
      adminUrl: config.proxy.adminUrl,
      dataDir: config.dataDir,
      instance: config.instance,
      log,
      answers: () => proxy.answers(),
      mounts: d.probes.proxyMounts,
    }),
  });
  const dns = createDnsSync(db, edge.writeDns);
  const dnsSupervisor = createDnsSupervisor({ dataDir: config.dataDir, port: config.proxy.dnsPort, log });
  manager.register(
    createProxyReconciler({
      db,
      // A Caddy svc runs on one engine: its answer is trusted while the same process runs (trust.ts); an
      // external Caddy, and the Swarm edge (whose relay restarts unseen), are asked every pass.
      proxy: config.proxy.mode !== 'external' && config.runtime.kind === 'docker' ? trustedProxy(edge.routes, { identity: d.caddyIdentity }) : edge.routes,
      dns,
      log,
      ensureDnsResponder: dnsSupervisor.ensure,
      held: d.held,
      listening: d.held ? listeningPorts : undefined,
      ensureProxyRunning: edge.ensureRunning,
    }),
  );
  manager.register(
    createAppReconciler({
      db,
      bus,
      runtime,
      sealer,
      log,
      enqueue: manager.enqueue,
      dns,
      proxy: edge.drain,
      env: {
        resolve: (appId) => deployEnv(db, sealer, appId),
        missingRequired: (appId) => missingRequired(db, appId),
      },
      probe: d.probes.probe,
      now: Date.now,
      kills: d.kills,
      build: {
        workDir: join(config.dataDir, 'builds'),
        images: config.buildImages,
        tokenFor: installationTokenFor(createCodehostClient({ apiUrl: config.codehost.apiUrl, creds: d.codehost }), d.codehost, config.codehost.webUrl),
        repoToken: (app) => (app.repoTokenSealed ? sealer.open(app.repoTokenSealed) : undefined),
      },
      settings: {
        network: config.network,
        instance: config.instance,
        dataDir: config.dataDir,
        healthTimeoutMs: 30_000,
        dnsRefreshMs: DNS_REFRESH_MS,
        stopGraceSeconds: 10,
        watchMs: config.deployWatchSeconds * 1000,
      },
    }),
  );
  manager.register(
    createJobsReconciler({
      db, bus, runtime, sealer, log,
      env: { resolve: (appId) => deployEnv(db, sealer, appId) },
      now: d.now,
      settings: { network: config.network, instance: config.instance, dataDir: config.dataDir, stopGraceSeconds: 10 },
    }),
  );
  manager.register(
    createServiceReconciler({ db, bus, runtime, sealer, log, now: Date.now, images: config.images, enqueue: manager.enqueue, httpGet: d.probes.probe, tcpOpen: d.probes.tcpOpen, fetch: d.probes.serviceFetch, settings: { network: config.network, instance: config.instance, dataDir: config.dataDir } }),
  );
}
