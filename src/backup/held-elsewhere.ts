// Services whose data directory is on another node's disk (a Swarm with a node labelled `svc.services=true`,
// docs/decisions/0042-service-data-on-other-nodes.md). A backup reads such a directory where it is
// (create-archive.ts); a restore writes the restored services/ on the disk of the node they will run on
// (restore.ts, through the runtime's NodeDisk), and refuses, before anything changes, what it cannot do.
import Database from 'better-sqlite3';
import type { DataNode, Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { listServices } from '../store/services.js';

export interface RemoteDataFacts {
  /** Live services whose data is held on another node. */
  live: { name: string; node: DataNode }[];
  /** Services the archive restores. */
  restored: string[];
  /** Archive services with a dump and no data directory (loaded from the manager's disk once active). */
  dumpsOnly?: string[];
  /** Where a service created now would hold its data, when not on the manager (the labelled node). */
  newServicesOn?: DataNode;
}

export type RemoteDataPlan = { refusal: string } | { node?: DataNode };

/**
 * Pure: where this restore writes the services' data, or why it cannot be done (one sentence). The restore
 * removes every service's Swarm service and the reconcilers create them again as new ones, placed by the
 * label: so the restored data goes to the labelled node when there is one (its `services/` is swapped there
 * as the manager's is here), else the manager. A live service held on any other node is refused: once
 * removed it would be placed elsewhere, away from its data, even by a rollback. So is a dump-only service
 * going to another node (its dump is loaded from the manager's disk).
 */
export function planRemoteData(f: RemoteDataFacts): RemoteDataPlan {
  const target = f.newServicesOn;
  const stranded = f.live.filter((s) => s.node.id !== target?.id);
  const why: string[] = [];
  if (stranded.length > 0) {
    why.push(`the data of ${stranded.map((s) => `service ${s.name} is on node ${s.node.hostname}`).join(', ')}, where services are no longer placed (${target ? `node ${target.hostname} is labelled svc.services=true` : 'no node is labelled svc.services=true'})`);
  }
  const dumpsOnly = target ? (f.dumpsOnly ?? []) : [];
  if (dumpsOnly.length > 0) why.push(`the archive has only a dump of ${dumpsOnly.join(', ')}, which cannot be loaded on node ${target!.hostname}`);
  if (why.length > 0) return { refusal: `this restore cannot be done: ${why.join('; ')}. Nothing was changed` };
  return { node: target && (f.restored.length > 0 || f.live.length > 0) ? target : undefined };
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
export async function remoteDataFacts(
  db: Db,
  runtime: Pick<Runtime, 'dataNodeOf' | 'newServiceDataNode'>,
  snapshot: string,
  contents: { serviceDirs: string[]; dumps: string[] },
): Promise<RemoteDataFacts> {
  const live: RemoteDataFacts['live'] = [];
  for (const svc of listServices(db)) {
    const node = await runtime.dataNodeOf(svc.containerName);
    if (node) live.push({ name: svc.name, node });
  }
  const restored = snapshotServiceNames(snapshot);
  const dumpsOnly = contents.dumps.filter((n) => !contents.serviceDirs.includes(n));
  return { live, restored, dumpsOnly, newServicesOn: await runtime.newServiceDataNode() };
}
