// The Swarm objects svc's infrastructure reconcilers manage (the node agents, the edge nodes' services): nodes,
// services and secrets of the manager's engine, read and written through a narrow port, so the reconcilers
// (src/reconcilers/agents, src/reconcilers/edges) observe, plan and act on it and their tests use a fake.
import type Docker from 'dockerode';
import { call } from './docker-errors.js';
import type { RegistryAuthLookup } from './runtime.js';
import type { NodeDoc } from './swarm-map.js';

/** A node as the plans read it. */
export interface SwarmNode {
  id: string;
  hostname?: string;
  labels?: Record<string, string>;
}

/** A service as the plans read it. */
export interface SwarmServiceRow {
  id: string;
  name: string;
  labels: Record<string, string>;
  /** Its replica count (1 as made; someone's `docker service scale` changes it, and no label says so). */
  replicas?: number;
}

export interface SwarmSecretRow {
  id: string;
  name: string;
}

/** A service spec as the engine takes it (built by the pure spec modules). */
export type SwarmServiceSpec = { Name: string } & Record<string, unknown>;

export interface SwarmObjects {
  nodes(): Promise<SwarmNode[]>;
  /** Services carrying every `key=value` label. */
  services(labels: string[]): Promise<SwarmServiceRow[]>;
  secrets(labels: string[]): Promise<SwarmSecretRow[]>;
  /** Makes a secret; answers its id. */
  createSecret(name: string, labels: Record<string, string>, data: string): Promise<string>;
  /** Rejects while a service still names it (Swarm refuses); a secret already gone is fine. */
  removeSecret(secret: SwarmSecretRow): Promise<void>;
  /** `image`: the credentials svc holds for its registry go with the call. */
  createService(spec: SwarmServiceSpec, image: string): Promise<void>;
  /** Answers false when the service is gone meanwhile (the next pass makes it again). */
  updateService(service: SwarmServiceRow, spec: SwarmServiceSpec, image: string): Promise<boolean>;
  /** A service already gone is fine. */
  removeService(service: SwarmServiceRow): Promise<void>;
  /** The node svc runs on (the manager). */
  selfNodeId(): Promise<string>;
  /** The instance's overlay, made when missing (the services join it). */
  ensureNetwork(): Promise<void>;
}

interface ServiceLs {
  ID: string;
  Spec: { Name: string; Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } };
}

/** The manager's engine as SwarmObjects. */
export function createSwarmObjects(o: { docker: Docker; selfNodeId: () => Promise<string>; ensureNetwork: () => Promise<void>; registryAuth?: RegistryAuthLookup }): SwarmObjects {
  const d = o.docker;
  return {
    async nodes() {
      const nodes = ((await call('node ls', () => d.listNodes())) ?? []) as NodeDoc[];
      return nodes.map((n) => ({ id: n.ID, hostname: n.Description?.Hostname, labels: n.Spec?.Labels ?? {} }));
    },
    async services(labels) {
      const services = ((await call('service ls', () => d.listServices({ filters: { label: labels } }))) ?? []) as unknown as ServiceLs[];
      return services.map((s) => ({ id: s.ID, name: s.Spec.Name, labels: s.Spec.Labels ?? {}, replicas: s.Spec.Mode?.Replicated?.Replicas }));
    },
    async secrets(labels) {
      const secrets = ((await call('secret ls', () => d.listSecrets({ filters: JSON.stringify({ label: labels }) } as never) as unknown as Promise<unknown>)) ?? []) as unknown as { ID: string; Spec: { Name: string } }[];
      return secrets.map((s) => ({ id: s.ID, name: s.Spec.Name }));
    },
    async createSecret(name, labels, data) {
      const made = await call(`secret create ${name}`, () => d.createSecret({ Name: name, Labels: labels, Data: Buffer.from(data).toString('base64') } as never));
      return (made as unknown as { id: string }).id;
    },
    async removeSecret(s) {
      await call(`secret rm ${s.name}`, () => d.getSecret(s.id).remove(), [404]);
    },
    async createService(spec, image) {
      const auth = o.registryAuth?.(image);
      await call(`service create ${spec.Name}`, () => (auth ? d.createService(auth as never, spec as never) : d.createService(spec as never)) as Promise<unknown>);
    },
    async updateService(s, spec, image) {
      const doc = (await call(`service inspect ${s.name}`, () => d.getService(s.id).inspect(), [404])) as { Version: { Index: number } } | undefined;
      if (!doc) return false;
      const auth = o.registryAuth?.(image);
      const body = { ...spec, version: doc.Version.Index } as never;
      await call(`service update ${s.name}`, () => (auth ? d.getService(s.id).update(auth as never, body) : d.getService(s.id).update(body)) as Promise<unknown>);
      return true;
    },
    async removeService(s) {
      await call(`service rm ${s.name}`, () => d.getService(s.id).remove(), [404]);
    },
    selfNodeId: o.selfNodeId,
    ensureNetwork: o.ensureNetwork,
  };
}
