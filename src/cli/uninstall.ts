// `svc uninstall [--purge] [--yes]`: removes what one svc (one data directory) made outside its data
// directory: its containers (apps, services, the proxy container, the edge relay `<instance>-edge` and its
// resolver `<instance>-edge-dns` on a Swarm: everything labelled with its svc.instance; on a Swarm manager its Swarm
// services first, uninstall-swarm.ts), its Docker network (the overlay on a Swarm, whose load-balancer
// endpoint is not a user: uninstall-network.ts) and its detached helpers (dnsmasq, the host Caddy, guards).
// The `svc` wrapper on the PATH goes too when it runs this checkout (path-wrapper.ts). The data directory stays unless --purge. Offline, like `svc restore FILE`: it refuses while the daemon of
// that data directory runs, since that one would recreate everything at once.
import { existsSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { parseConfig, readEnvFile, withInstance } from '../config.js';
import { createLogger } from '../log.js';
import { stopHelpersOf } from '../proxy/detached.js';
import { createDockerRuntime } from '../runtime/docker.js';
import { call } from '../runtime/docker-errors.js';
import { LABELS } from '../runtime/runtime.js';
import { INSTANCE_KEY, LEGACY_INSTANCE } from '../store/instance.js';
import { CliError } from './client.js';
import { removeSwarmServices, SWARM_SERVICE_LABEL } from './uninstall-swarm.js';
import { removePathWrapper } from './path-wrapper.js';
import { networkUsers } from './uninstall-network.js';
import { registryDir, stopOwnRegistry } from '../cluster/registry.js';
import type Docker from 'dockerode';

/** Pids (not this process) that hold the database file open: the daemon of that data directory. */
export function pidsHolding(path: string): number[] {
  if (!existsSync(path)) return [];
  // fd links name the real path: a data directory reached through a symlink must still match.
  const file = realpathSync(path);
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${d}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${d}/fd/${fd}`) === file) {
          out.push(Number(d));
          break;
        }
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return out;
}

/** The identity stored in the data directory's database (read only: nothing is migrated or written). */
export function storedInstanceOf(dbPath: string): string | undefined {
  if (!existsSync(dbPath)) return undefined;
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('select value from settings where key = ?').get(INSTANCE_KEY) as { value: string } | undefined;
    return row?.value;
  } catch {
    return undefined; // a database from before settings existed
  } finally {
    db.close();
  }
}

export interface UninstallTarget {
  dataDir: string;
  instance: string;
  network: string;
  dockerHost?: string;
}

/** Removes the instance's containers, network and helpers; returns one line per thing done. */
export async function uninstallInstance(t: UninstallTarget): Promise<string[]> {
  const lines: string[] = [];
  const runtime = createDockerRuntime({ dockerHost: t.dockerHost, log: createLogger('error'), instance: t.instance });
  if (!(await runtime.ping())) throw new Error(`the Docker engine does not answer${t.dockerHost ? ` at ${t.dockerHost}` : ''}; start it and run svc uninstall again`);
  // On a Swarm manager: the instance's services first (their tasks are not containers to remove by hand).
  lines.push(...(await removeSwarmServices(runtime.docker, t.instance)));
  const containers = (await runtime.list({ [LABELS.instance]: t.instance })).filter((c) => !c.labels[SWARM_SERVICE_LABEL]);
  // Stopped with their grace period first, so databases of services shut down cleanly; the data stays.
  await Promise.all(containers.map((c) => runtime.stop(c.id, 10)));
  for (const c of containers) {
    await runtime.remove(c.id);
    lines.push(`removed container ${c.name}`);
  }
  const net = (await call(`network inspect ${t.network}`, () => runtime.docker.getNetwork(t.network).inspect(), [404])) as
    | { Id: string; Labels?: Record<string, string> | null; Containers?: Record<string, { Name: string }> | null }
    | undefined;
  if (net) {
    const owner = net.Labels?.[LABELS.instance];
    // Only this instance's network (or, unlabelled from before labels, the one named after it).
    if (owner === t.instance || (owner === undefined && t.network === t.instance)) {
      const users = networkUsers(t.network, net.Containers);
      if (users.length > 0) lines.push(`kept network ${t.network}: other containers still use it (${users.join(', ')})`);
      else {
        await removeNetwork(runtime.docker, net.Id, t.network);
        lines.push(`removed network ${t.network}`);
      }
    } else lines.push(`kept network ${t.network}: it belongs to ${owner ? `svc instance ${owner}` : 'something else'}`);
  }
  // A guard may restart its helper between two signals: look again until none is left.
  for (let i = 0; i < 3; i++) await stopHelpersOf(t.dataDir);
  lines.push('stopped the proxy and DNS helpers of this data directory (if any ran)');
  if (await stopOwnRegistry(t.dataDir)) lines.push(`stopped svc's registry (its images stay in ${registryDir(t.dataDir)} unless --purge)`);
  return lines;
}

/**
 * `network rm`, retried for a few seconds while the engine still answers "active endpoints": an overlay's
 * endpoints of removed Swarm tasks go away a moment after their containers. A Swarm manager accepts the
 * removal of an overlay and drops it from its list a moment later: waited for too, so "removed" is true.
 */
async function removeNetwork(docker: Docker, id: string, name: string): Promise<void> {
  const end = Date.now() + 15_000;
  for (;;) {
    try {
      await call(`network rm ${name}`, () => docker.getNetwork(id).remove(), [404]);
      break;
    } catch (err) {
      if (Date.now() > end || !/active endpoints/i.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  while ((await call(`network inspect ${name}`, () => docker.getNetwork(id).inspect(), [404])) !== undefined) {
    if (Date.now() > end) throw new Error(`network rm ${name}: accepted, but the engine still lists it after 15 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function confirmed(dataDir: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(`Delete ${dataDir} and everything in it (database, service data, backups kept there)? Type "yes": `)).trim() === 'yes';
  } finally {
    rl.close();
  }
}

export async function uninstallCommand(o: { purge: boolean; yes: boolean; write?: (s: string) => void }): Promise<number> {
  const write = o.write ?? ((s: string) => process.stdout.write(s));
  const envFile = resolve('.env');
  const vars: Record<string, string | undefined> = { ...readEnvFile(envFile), ...process.env };
  // Nothing is decrypted here: a placeholder keeps the validation from asking for a key (and loadConfig from writing one).
  vars.SVC_ENCRYPTION_KEY ??= Buffer.alloc(32).toString('base64');
  const base = parseConfig(vars, envFile);
  const running = pidsHolding(base.dbPath);
  if (running.length > 0) {
    throw new CliError(
      `the svc daemon of ${base.dataDir} runs (pid ${running.join(', ')}); stop it first (Ctrl-C in its terminal, ` +
        `or kill ${running.join(' ')}), then run svc uninstall again`,
    );
  }
  const stored = storedInstanceOf(base.dbPath);
  if (!stored && !base.instanceOverride && !existsSync(base.dbPath)) {
    throw new CliError(`no svc data directory at ${base.dataDir} (no svc.db): run svc uninstall where its .env is, or set SVC_DATA_DIR (and SVC_INSTANCE if you know it)`);
  }
  const config = withInstance(base, base.instanceOverride ?? stored ?? LEGACY_INSTANCE);
  if (o.purge && !o.yes && !(await confirmed(config.dataDir))) {
    throw new CliError(`--purge deletes ${config.dataDir}: confirm with --yes (nothing was removed)`, 2);
  }
  write(`uninstalling svc instance ${config.instance} (data directory ${config.dataDir})\n`);
  for (const line of await uninstallInstance({ dataDir: config.dataDir, instance: config.instance, network: config.network, dockerHost: config.dockerHost })) write(`  ${line}\n`);
  const wrapper = removePathWrapper();
  if (wrapper) write(`  ${wrapper}\n`);
  if (o.purge) {
    rmSync(config.dataDir, { recursive: true, force: true });
    write(`deleted ${config.dataDir}\n`);
    if (!config.backupDir.startsWith(join(config.dataDir, '/'))) write(`kept the backups in ${config.backupDir} (outside the data directory)\n`);
  } else {
    write(`kept the data directory ${config.dataDir} (svc uninstall --purge deletes it); svc serve there starts it all again\n`);
  }
  return 0;
}
