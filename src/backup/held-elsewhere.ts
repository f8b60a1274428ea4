// Services whose data directory is on another node's disk (a Swarm with a node labelled `svc.services=true`,
// docs/design.md "Data of services on other nodes"). A backup reads such a directory where it is
// (create-archive.ts); a restore writes services/ on the manager's disk only, so one that would swap a
// service held elsewhere, or start restored services on another node, is refused before anything changes.
import Database from 'better-sqlite3';
import type { DataNode, Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { listServices } from '../store/services.js';

export interface RemoteDataFacts {
  /** Live services whose data is held on another node. */
  live: { name: string; node: DataNode }[];
  /** Services the archive restores. */
  restored: string[];
  /** Where a service created now would hold its data, when not on the manager. */
  newServicesOn?: DataNode;
}

/**
 * Pure: why this restore cannot be done (one sentence), or undefined. The restore removes every service's
 * Swarm service and the reconcilers create them again, placed as new ones: a live service held elsewhere
 * would lose its node (or start there on its old data), and restored services placed on another node
 * would not find the restored files, which are on the manager's disk.
 */
export function remoteDataRefusal(f: RemoteDataFacts): string | undefined {
  const why: string[] = [];
  if (f.live.length > 0) why.push(`the data of ${f.live.map((s) => `service ${s.name} is on node ${s.node.hostname}`).join(', ')}`);
  if (f.restored.length > 0 && f.newServicesOn) {
    why.push(`the restored services (${f.restored.join(', ')}) would start on node ${f.newServicesOn.hostname} (labelled svc.services=true), whose disk a restore cannot write yet`);
  }
  if (why.length === 0) return undefined;
  return `restoring services whose data is on another node than the manager is not supported yet: ${why.join('; ')}. Nothing was changed`;
}

/** The service names an archive's (checked) svc.db holds. */
export function snapshotServiceNames(path: string): string[] {
  const raw = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return raw.prepare('SELECT name FROM services ORDER BY name').pluck().all() as string[];
  } finally {
    raw.close();
  }
}

/** The facts of a restore of `snapshot` now: asks the runtime where each live service's data is. */
export async function remoteDataFacts(db: Db, runtime: Pick<Runtime, 'dataNodeOf' | 'newServiceDataNode'>, snapshot: string): Promise<RemoteDataFacts> {
  const live: RemoteDataFacts['live'] = [];
  for (const svc of listServices(db)) {
    const node = await runtime.dataNodeOf(svc.containerName);
    if (node) live.push({ name: svc.name, node });
  }
  const restored = snapshotServiceNames(snapshot);
  return { live, restored, newServicesOn: restored.length > 0 ? await runtime.newServiceDataNode() : undefined };
}
