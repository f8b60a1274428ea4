// An in-memory SwarmObjects (src/runtime/swarm-objects.ts) for the Swarm infrastructure reconcilers' unit
// tests (DESIGN.md rule 8: fakes of our own ports): nodes, services and secrets in maps, filtered by label as
// the engine does, every write recorded, ids assigned in order, and an engine that can go away.
import type { SwarmNode, SwarmObjects, SwarmSecretRow, SwarmServiceRow, SwarmServiceSpec } from '../../src/runtime/swarm-objects.js';

export interface FakeSwarm extends SwarmObjects {
  nodeList: SwarmNode[];
  serviceMap: Map<string, SwarmServiceRow & { spec?: SwarmServiceSpec; image?: string }>;
  secretMap: Map<string, SwarmSecretRow & { labels: Record<string, string> }>;
  /** Every write, in order: `create <name>`, `update <name>`, `rm <name>`, `secret <name>`, `secret rm <name>`, `network`. */
  writes: string[];
  /** Names of secrets a service still uses: their removal is refused, as Swarm does. */
  inUse: Set<string>;
  down: boolean;
}

const matches = (labels: Record<string, string>, filter: string[]) => filter.every((f) => labels[f.split('=')[0]!] === f.split('=').slice(1).join('='));

export function createFakeSwarm(o: { self: string; nodes: SwarmNode[] }): FakeSwarm {
  let next = 0;
  const id = () => `id${++next}`;
  const f: FakeSwarm = {
    nodeList: o.nodes,
    serviceMap: new Map(),
    secretMap: new Map(),
    writes: [],
    inUse: new Set(),
    down: false,
    async nodes() {
      up();
      return f.nodeList.map((n) => ({ ...n }));
    },
    async services(labels) {
      up();
      return [...f.serviceMap.values()].filter((s) => matches(s.labels, labels)).map(({ id, name, labels, replicas }) => ({ id, name, labels, replicas }));
    },
    async secrets(labels) {
      up();
      return [...f.secretMap.values()].filter((s) => matches(s.labels, labels)).map(({ id, name }) => ({ id, name }));
    },
    async createSecret(name, labels) {
      up();
      const s = { id: id(), name, labels };
      f.secretMap.set(s.id, s);
      f.writes.push(`secret ${name}`);
      return s.id;
    },
    async removeSecret(s) {
      up();
      if (f.inUse.has(s.name)) throw new Error(`secret ${s.name} is in use`);
      f.secretMap.delete(s.id);
      f.writes.push(`secret rm ${s.name}`);
    },
    async createService(spec, image) {
      up();
      const labels = (spec.Labels ?? {}) as Record<string, string>;
      const s = { id: id(), name: spec.Name, labels, replicas: 1, spec, image };
      f.serviceMap.set(s.id, s);
      f.writes.push(`create ${spec.Name}`);
    },
    async updateService(row, spec, image) {
      up();
      if (!f.serviceMap.has(row.id)) return false;
      f.serviceMap.set(row.id, { id: row.id, name: spec.Name, labels: (spec.Labels ?? {}) as Record<string, string>, replicas: 1, spec, image });
      f.writes.push(`update ${row.name}`);
      return true;
    },
    async removeService(row) {
      up();
      f.serviceMap.delete(row.id);
      f.writes.push(`rm ${row.name}`);
    },
    async selfNodeId() {
      up();
      return o.self;
    },
    async ensureNetwork() {
      up();
      f.writes.push('network');
    },
  };
  function up() {
    if (f.down) throw new Error('the engine is not answering');
  }
  return f;
}
