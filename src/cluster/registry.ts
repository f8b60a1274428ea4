// The cluster's registry when SVC_REGISTRY is unset on a Swarm (issue 19 "Images"): Debian's
// `docker-registry` run by svc on the manager, so a svc_build image built there can be pulled by every
// node. Its storage is `SVC_DATA_DIR/registry/data` (not in backups: images are rebuildable), it listens on
// the manager's Swarm address (the nodes' network, not every interface) at port 5000, plain HTTP: each
// node lists `<manager address>:5000` under `insecure-registries` in its daemon.json (docs/api.md). It runs
// detached under scripts/helper-guard.sh like the proxy's helpers: it outlives daemon restarts, is started
// again when it dies, and stops when the data directory is deleted.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { livePidFromFile, pidsWithArg, spawnGuarded, stopPids } from '../proxy/detached.js';

export const OWN_REGISTRY_PORT = 5000;
export const REGISTRY_BINARY = '/usr/bin/docker-registry';

export const registryDir = (dataDir: string) => join(dataDir, 'registry');
const configPath = (dataDir: string) => join(registryDir(dataDir), 'config.yml');

/** Pure: the registry's configuration (YAML, as its `serve` reads it). */
export function registryConfig(o: { storageDir: string; listen: string }): string {
  return ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${JSON.stringify(o.storageDir)}`, '  delete:', '    enabled: true', 'http:', `  addr: ${JSON.stringify(o.listen)}`, ''].join('\n');
}

export interface OwnRegistryOptions {
  dataDir: string;
  /** The manager's address on the nodes' network (Swarm's NodeAddr). */
  address: string;
  port?: number;
  /** How long to wait for `GET /v2/` to answer. */
  timeoutMs?: number;
}

/** Starts the registry unless it runs; resolves with its `host:port` once it answers. */
export async function ensureOwnRegistry(o: OwnRegistryOptions): Promise<string> {
  if (!/^[0-9a-fA-F.:]+$/.test(o.address)) throw new Error(`the manager's address ${JSON.stringify(o.address)} is not an IP address`);
  const hostPort = `${o.address.includes(':') ? `[${o.address}]` : o.address}:${o.port ?? OWN_REGISTRY_PORT}`;
  const dir = registryDir(o.dataDir);
  const config = configPath(o.dataDir);
  mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 });
  const text = registryConfig({ storageDir: join(dir, 'data'), listen: hostPort });
  let same = false;
  try {
    same = readFileSync(config, 'utf8') === text;
  } catch {
    /* first start */
  }
  const pidFile = join(dir, 'guard.pid');
  const running = livePidFromFile(pidFile, config);
  if (running && !same) await stopPids([running]); // the manager's address changed
  if (!running || !same) {
    writeFileSync(config, text, { mode: 0o600 });
    const started = spawnGuarded({ guardDir: dir, command: REGISTRY_BINARY, args: ['serve', config], logFile: join(dir, 'registry.log') });
    if (started.pid) writeFileSync(pidFile, String(started.pid), { mode: 0o600 });
  }
  const end = Date.now() + (o.timeoutMs ?? 10_000);
  for (;;) {
    try {
      const res = await fetch(`http://${hostPort}/v2/`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return hostPort;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`svc's registry (${REGISTRY_BINARY}) does not answer at ${hostPort}: ${lastLines(join(dir, 'registry.log'))} (set SVC_REGISTRY to use another registry)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops the registry of a data directory (uninstall, tests); its data stays. */
export async function stopOwnRegistry(dataDir: string): Promise<boolean> {
  const pids = pidsWithArg(configPath(dataDir));
  await stopPids(pids);
  return pids.length > 0;
}

function lastLines(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ') || 'no output';
  } catch {
    return 'no output';
  }
}
