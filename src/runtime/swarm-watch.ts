// Events for what the manager's container events cannot show: a task on another node that ended, and a node
// that went down, came back, joined, left or had its labels changed. Swarm (API 1.41) sends no task events, so this compares the tasks of this
// instance's services and the nodes' states every `intervalMs` (three list calls: services, tasks, nodes) and turns each change into a
// RuntimeEvent: `start`/`die` with the service's labels (the controller enqueues its app or service key, as
// for a container), `node_down`/`node_up`/`node_joined`/`node_left` for a node (no svc labels: an
// app-independent event).
import type Docker from 'dockerode';
import type { Logger } from '../log.js';
import { LABELS, type RuntimeEvent } from './runtime.js';
import { currentTask, type NodeDoc, type ServiceDoc, type TaskDoc } from './swarm-map.js';

export interface SwarmWatchOptions {
  docker: Docker;
  instance: string;
  intervalMs: number;
  signal: AbortSignal;
  log: Logger;
}

/** One look: service id -> fingerprint of its current task, node id -> state. */
export interface SwarmSnapshot {
  tasks: Map<string, { fp: string; running: boolean; name: string; labels: Record<string, string> }>;
  /** `labels`: the node's labels as canonical JSON (absent in older looks: no change reported). */
  nodes: Map<string, { state: string; hostname: string; labels?: string }>;
}

/** Pure: the events between two snapshots (none for the first one). */
export function diffSnapshots(before: SwarmSnapshot | undefined, after: SwarmSnapshot): RuntimeEvent[] {
  if (!before) return [];
  const out: RuntimeEvent[] = [];
  for (const [id, t] of after.tasks) {
    const b = before.tasks.get(id);
    if (b?.fp === t.fp) continue;
    out.push({ action: t.running ? 'start' : 'die', id, name: t.name, labels: t.labels });
  }
  for (const [id, b] of before.tasks) if (!after.tasks.has(id)) out.push({ action: 'destroy', id, name: b.name, labels: b.labels });
  for (const [id, n] of after.nodes) {
    const b = before.nodes.get(id);
    if (b && b.state !== n.state) out.push({ action: n.state === 'ready' ? 'node_up' : 'node_down', id, name: n.hostname, labels: {} });
    // A node that joined or left changes no state svc records, but the node agents follow it.
    if (!b) out.push({ action: 'node_joined', id, name: n.hostname, labels: {} });
    // A label changed (`svc.edge`, `svc.engine-socket`, by PUT /api/nodes/{id} or `docker node update`): the edge
    // nodes and the agents follow it within a look.
    else if (b.labels !== undefined && n.labels !== undefined && b.labels !== n.labels) out.push({ action: 'node_changed', id, name: n.hostname, labels: {} });
  }
  for (const [id, b] of before.nodes) if (!after.nodes.has(id)) out.push({ action: 'node_left', id, name: b.hostname, labels: {} });
  return out;
}

/** A node's labels as one comparable string (sorted keys). */
const labelsKey = (labels: Record<string, string> | undefined) => JSON.stringify(Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

async function snapshot(docker: Docker, instance: string): Promise<SwarmSnapshot> {
  const services = (await docker.listServices({ filters: { label: [`${LABELS.instance}=${instance}`] } })) as unknown as ServiceDoc[];
  const ours = new Set(services.map((s) => s.ID));
  const tasks = ((await docker.listTasks()) as TaskDoc[]).filter((t) => ours.has(t.ServiceID));
  const nodes = (await docker.listNodes()) as NodeDoc[];
  const down = new Set(nodes.filter((n) => n.Status?.State !== 'ready').map((n) => n.ID));
  const byService = new Map<string, TaskDoc[]>();
  for (const t of tasks) byService.set(t.ServiceID, [...(byService.get(t.ServiceID) ?? []), t]);
  const snap: SwarmSnapshot = { tasks: new Map(), nodes: new Map() };
  for (const s of services) {
    const t = currentTask(byService.get(s.ID) ?? []);
    const running = t?.Status?.State === 'running' && t.DesiredState === 'running' && !down.has(t.NodeID ?? '');
    snap.tasks.set(s.ID, { fp: `${t?.ID}/${t?.Status?.State}/${t?.DesiredState}/${running}`, running, name: s.Spec.Name, labels: s.Spec.Labels ?? {} });
  }
  for (const n of nodes) snap.nodes.set(n.ID, { state: n.Status?.State ?? 'unknown', hostname: n.Description?.Hostname ?? n.ID, labels: labelsKey(n.Spec?.Labels) });
  return snap;
}

/** Changes as events until the signal aborts; an engine error ends the stream (the watcher reconnects). */
export async function* watchSwarm(o: SwarmWatchOptions): AsyncGenerator<RuntimeEvent> {
  let last: SwarmSnapshot | undefined;
  while (!o.signal.aborted) {
    const now = await snapshot(o.docker, o.instance);
    for (const ev of diffSnapshots(last, now)) yield ev;
    last = now;
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, o.intervalMs);
      function done() {
        clearTimeout(t);
        o.signal.removeEventListener('abort', done);
        resolve();
      }
      o.signal.addEventListener('abort', done);
    });
  }
}
