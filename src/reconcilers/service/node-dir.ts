// A managed service's directory on another node (docs/decisions/0042-service-data-on-other-nodes.md): a service
// placed on the node labelled `svc.services=true` needs `SVC_DATA_DIR/services/<name>` there before Swarm
// starts it (a bind mount whose source is missing is refused), and the catalog's files (garage.toml) in it.
// Made through the runtime's NodeDisk, only when the service is created (the create path, not every pass).
// Never a fresh, empty directory for a service whose data is somewhere else: that refusal is decided here.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PENDING_DUMPS_DIR } from '../../backup/pending-dumps.js';
import type { Credentials, ServiceKind } from '../../catalog/catalog.js';
import type { DataNode, Runtime } from '../../runtime/runtime.js';
import type { ServiceRow } from '../../store/schema/services.js';
import type { DataOwner } from './data-owner.js';
import type { ServiceView } from '../../store/service-view.js';

/** What to make on the node: the directory (relative to the data directory) and the files in it. */
export interface NodeDirPlan {
  dir: string;
  files: { path: string; content: string; mode: number }[];
}

/** Pure: the directory and files of a service on another node's disk, paths relative to the data directory. */
export function nodeDirPlan(dataDir: string, row: Pick<ServiceRow, 'name' | 'dataDir'>, kind: Pick<ServiceKind, 'files'>, creds: Credentials): NodeDirPlan {
  const dir = relative(dataDir, row.dataDir);
  if (!dir || dir.startsWith('..') || dir.startsWith('/')) throw new Error(`the data directory of ${row.name} (${row.dataDir}) is not inside ${dataDir}`);
  return { dir, files: (kind.files?.(creds) ?? []).map((f) => ({ path: `${dir}/${f.path}`, content: f.content, mode: f.mode })) };
}

export interface NodeDirFacts {
  name: string;
  node: string;
  /** Entries in the service's directory on this host's disk (the manager's: empty for a service held elsewhere). */
  hereEntries: number;
  /** The service was active once: it has data somewhere. */
  activated: boolean;
  /** A restore left its dump on this host's disk (`restore-dumps/<name>.sql`), loaded through its directory here. */
  dumpWaitingHere?: boolean;
  /** The directory exists on the node (a restore put it there, or an earlier create made it). */
  existsThere: boolean;
}

/**
 * Pure: why the service must not be created on that node, or undefined. Its data on this host's disk, or an
 * active-once service whose directory the node does not have: starting there would start it on an empty
 * directory while its data is elsewhere. The sentence says what the operator can do.
 */
export function nodeDirRefusal(f: NodeDirFacts): string | undefined {
  if (f.hereEntries > 0) {
    return (
      `the data of service ${f.name} is on this host's disk (services/${f.name} is not empty), but services are placed on node ${f.node} ` +
      `(label svc.services=true): svc does not start it there on an empty directory. Remove the label to run it here, ` +
      `or run it here and then back up and restore with the label set to move its data to ${f.node}`
    );
  }
  if (f.dumpWaitingHere) {
    return (
      `a dump of service ${f.name} waits on this host's disk (${PENDING_DUMPS_DIR}/${f.name}.sql, from a restore whose archive had no data ` +
      `directory for it), and it is loaded through the service's directory here, but services are placed on node ${f.node} ` +
      `(label svc.services=true). Remove the label to run it here`
    );
  }
  if (f.activated && !f.existsThere) {
    return (
      `service ${f.name} has run before, but node ${f.node} (label svc.services=true), where services are placed, has no directory ` +
      `services/${f.name}: its data is elsewhere, and svc does not start it on an empty directory. Put the label back on the node ` +
      `that holds its data, or restore a backup with the label on ${f.node}`
    );
  }
  return undefined;
}

/**
 * The note svc leaves in this host's empty directory of a service it made on another node: that node's id and
 * host name (JSON). A later create on this host (the label removed, the service's task gone) reads it and
 * refuses, instead of starting the service on an empty directory while its data is on that node; a purge
 * reads it to remove the data there too.
 */
export const HELD_ON_NODE_FILE = '.svc-held-on-node';

/**
 * Pure: why a service must not be created on this host's disk, or undefined: it has run before on the node
 * `heldOn` names (its note here), so its data is there.
 */
export function heldElsewhereRefusal(name: string, activated: boolean, heldOn: string | undefined): string | undefined {
  if (!activated || heldOn === undefined) return undefined;
  return (
    `the data of service ${name} is on node ${heldOn}, where svc made it while that node was labelled svc.services=true, ` +
    `and no node is labelled now: svc does not start it on this host's empty directory. Put the label svc.services=true back ` +
    `on ${heldOn}, or restore a backup without the label to bring its data to this host`
  );
}

/** The node named by the note in this host's directory of the service (`{id, hostname}`), if any. */
export function heldOnNode(dataDir: string): DataNode | undefined {
  try {
    const n = JSON.parse(readFileSync(join(dataDir, HELD_ON_NODE_FILE), 'utf8')) as Partial<DataNode>;
    return typeof n.id === 'string' && typeof n.hostname === 'string' ? { id: n.id, hostname: n.hostname } : undefined;
  } catch {
    return undefined;
  }
}

/** Makes this host's (empty) directory of a service held on `node`, with the note naming the node. */
export function markHeldOnNode(dataDir: string, node: DataNode): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, HELD_ON_NODE_FILE), JSON.stringify({ id: node.id, hostname: node.hostname }) + '\n', { mode: 0o600 });
}

/**
 * A purge of a service held on another node removes its directory there too, through a helper on that node
 * (tag `purge-<service id>`). A node that is no longer in the Swarm cannot be reached and holds nothing svc
 * can use: `gone`, said by the caller. A node that is there but cannot be reached now throws: the
 * deletion is retried, so the data is never left behind on a node that comes back.
 */
export async function purgeOnNode(runtime: Pick<Runtime, 'openNodeDisk' | 'nodes'>, dataDir: string, row: Pick<ServiceRow, 'id' | 'name' | 'dataDir'>): Promise<'none' | { purged: DataNode } | { gone: DataNode }> {
  const node = heldOnNode(row.dataDir);
  if (!node) return 'none';
  if (!(await runtime.nodes()).some((n) => n.id === node.id)) return { gone: node };
  const plan = nodeDirPlan(dataDir, row, {}, {});
  let disk;
  try {
    disk = await runtime.openNodeDisk(node, dataDir, `purge-${row.id}`);
  } catch (err) {
    throw new Error(`could not purge the data of ${row.name} on node ${node.hostname}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    await disk.remove(plan.dir);
  } finally {
    await disk.close();
  }
  return { purged: node };
}

/** This host's directory of a service about to run here: the note of an earlier placement elsewhere goes. */
export function unmarkHeldOnNode(dataDir: string): void {
  rmSync(join(dataDir, HELD_ON_NODE_FILE), { force: true });
}

/** Entries of a directory on this host's disk (svc's note not counted); 0 when it is missing. */
function entriesHere(dir: string): number {
  try {
    return readdirSync(dir).filter((e) => e !== HELD_ON_NODE_FILE).length;
  } catch {
    return 0;
  }
}

/**
 * Makes the service's directory (mode 700, or `owner`'s owner and mode: the user the image runs as) and the
 * catalog's files (their modes) on the node, through a
 * helper there named after the service's id (a leftover of a daemon that died is replaced by the next
 * attempt). Throws a sentence naming the node when it cannot.
 */
export async function prepareOnNode(
  runtime: Pick<Runtime, 'openNodeDisk'>,
  node: DataNode,
  dataDir: string,
  row: Pick<ServiceView, 'id' | 'name' | 'dataDir' | 'activatedAt'>,
  kind: Pick<ServiceKind, 'files'>,
  creds: Credentials,
  owner?: DataOwner,
): Promise<void> {
  const plan = nodeDirPlan(dataDir, row, kind, creds);
  const facts = {
    name: row.name,
    node: node.hostname,
    hereEntries: entriesHere(row.dataDir),
    activated: row.activatedAt !== null,
    dumpWaitingHere: existsSync(join(dataDir, PENDING_DUMPS_DIR, `${row.name}.sql`)),
  };
  const early = nodeDirRefusal({ ...facts, existsThere: true });
  if (early) throw new Error(early);
  let disk;
  try {
    disk = await runtime.openNodeDisk(node, dataDir, `prepare-${row.id}`);
  } catch (err) {
    throw new Error(`could not prepare the data directory of ${row.name} on node ${node.hostname}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const refusal = nodeDirRefusal({ ...facts, existsThere: await disk.exists(plan.dir) });
    if (refusal) throw new Error(refusal);
    await disk.mkdir(plan.dir);
    // Given to the user the image runs as, as on this host (data-owner.ts); the catalog's files stay root's.
    if (owner) await disk.own(plan.dir, owner.uid ?? 0, owner.gid, owner.mode);
    for (const f of plan.files) await disk.writeFile(f.path, f.content, f.mode);
  } catch (err) {
    await disk.close().catch(() => {}); // a helper left behind is replaced by the next attempt's open
    throw err;
  }
  // Not swallowed: the create is retried, and its open replaces the helper that could not be removed.
  await disk.close();
}
