// The service catalog: everything svc knows about one service type in one place (image, port, data path,
// credentials, container command, readiness, injected variables, backup dump). Reconciler, store, API and
// backups read it so adding a type is one new file, not a hunt through switch statements.
import { SERVICE_TYPES, SERVICE_VERSIONS, versionSuffix, type ServiceType } from './types.js';
import { postgres } from './postgres.js';
import { mysql } from './mysql.js';
import { redis } from './redis.js';
import { garage } from './garage.js';

/** The generated secrets and names of one service, sealed as JSON in `services.credentials_sealed`. */
export type Credentials = Record<string, string>;

/** Where a service lives, for the values that derive from it (host name, data dir). */
export interface ServicePlace {
  /** Service name (`[a-z][a-z0-9-]*`). */
  name: string;
  /** Container name, also its DNS name on the network. */
  host: string;
  /** Host directory mounted at `dataPath`. */
  dataDir: string;
}

/** A command run inside the service container (argument array, never a shell string). */
export interface ExecCommand {
  cmd: string[];
  /** Secrets go here, never into argv (argv shows in `ps` and engine events). */
  env?: Record<string, string>;
}

export type Readiness =
  /** Ready when the command exits 0 (and, if set, its stdout contains `expect`). */
  | {
      kind: 'exec';
      exec: ExecCommand;
      expect?: string;
      /**
       * Port that must accept TCP on the container's address before the command is worth running: a
       * connect costs nothing, a `docker exec` a process in the container, so readiness can be polled
       * often without loading the engine while the database initialises.
       */
      tcpPort?: number;
    }
  /** Ready when `GET http://<container address>:<port><path>` answers. */
  | { kind: 'http'; port: number; path: string };

export interface ContainerConfig {
  env: Record<string, string>;
  cmd?: string[];
  /** Files besides the data dir: host path (inside the data dir) to container path. */
  extraMounts?: { source: string; target: string; readOnly: boolean }[];
}

/**
 * The images the operator configured (config.ts). `<type>`: `SVC_IMAGE_<TYPE>`, the image of that type's
 * services for which no version-specific variable is set; `byVersion['postgres:17']`:
 * `SVC_IMAGE_POSTGRES_17`, one version's image, which wins. Neither: the official image of the version.
 */
export interface ServiceImages {
  postgres?: string;
  mysql?: string;
  redis?: string;
  garage?: string;
  byVersion?: Record<string, string>;
}

/**
 * Where a service's image came from. Only a `version` or `official` image is known to be of that version, so
 * only those are followed by a running service when they change (a minor update: a restart, data kept);
 * a type-wide `SVC_IMAGE_<TYPE>` is settled at activation, as before versions (decision 0033).
 */
export type ImageSource = 'version' | 'type' | 'official';

export interface ServiceKind {
  type: ServiceType;
  /** The official image of a version (`postgres:17`), used when no variable names one. */
  officialImage(version: string): string;
  internalPort: number;
  /** The engine's data directory inside the container; the service's host data dir is mounted there. */
  dataPath: string;
  /** A version whose image keeps its data elsewhere (postgres 18: /var/lib/postgresql). */
  dataPathAt?(version: string): string | undefined;
  /** Strong random credentials, generated once at creation. */
  generateCredentials(name: string): Credentials;
  container(creds: Credentials, place: ServicePlace, version?: string): ContainerConfig;
  /** Files the container needs before it starts (written into the data dir by the reconciler). */
  files?(creds: Credentials): { path: string; content: string; mode: number }[];
  readiness(creds: Credentials): Readiness;
  /**
   * Set when the service is provisioned once after its first readiness (garage: layout, bucket, and the
   * access key its credentials already hold, imported); the reconciler records when that was done.
   */
  provisionsOnce?: true;
  /** The fields of the credentials endpoint (SPEC.md 2.5), in order. */
  credentialFields(creds: Credentials, place: ServicePlace): Record<string, string | number>;
  /** Default prefix of injected variables (SPEC.md 2.6). */
  envPrefix: string;
  /** Injected variable suffix to credential field name. */
  envFields: [suffix: string, field: string][];
  /** Dump of all databases on stdout, for backups; undefined when a volume copy is the backup. */
  dump?(creds: Credentials): ExecCommand;
  /** Set for types that can be carried across versions (guarded major upgrades). */
  upgrade?: UpgradeOps;
  /** The apps' data on stdout without credentials, for loading into another service of the type (a preview's copy). */
  copyDump?(creds: Credentials): ExecCommand;
  /**
   * Instead of copyDump: run in the copy's container, copies the data from the parent at `sourceHost` itself
   * (redis: one replication); stdout is the size copied in bytes; exit 3 when the parent is over `maxBytes`.
   */
  copyFrom?(creds: Credentials, source: Credentials, sourceHost: string, maxBytes: number): ExecCommand;
  /** Loads a dump made by `dump` from a file inside the container (a restore whose archive lacks the data dir). */
  loadDump?(creds: Credentials, file: string): ExecCommand;
}

/**
 * How a type's data is carried across a major upgrade (issue 33) by a logical dump and load, each an
 * exec in one of the two containers. Types without it (garage: one version) are not upgraded.
 */
export interface UpgradeOps {
  /** Run in the old container: refuse writes from now on (the maintenance window) and end open sessions. */
  freeze(creds: Credentials): ExecCommand;
  /** Run in either container: take writes again (the old one after a failed upgrade or a revert; the new one after its load). */
  unfreeze(creds: Credentials): ExecCommand;
  /** Run in the new container: dump the old one (reached by its host name) with the new version's client, load it here. */
  move(creds: Credentials, fromHost: string): ExecCommand;
  /** Load errors that are expected (objects the new container made at its first start: the user, the database). */
  expectedLoadErrors(creds: Credentials): RegExp[];
  /** Lists the databases (stdout, one per line). */
  databases(creds: Credentials): ExecCommand;
  /** Per table of one database: `<table> <rows> <checksum>` lines on stdout, sorted. */
  tableSums(creds: Credentials, database: string): ExecCommand;
}

const KINDS: Record<ServiceType, ServiceKind> = { postgres, mysql, redis, garage };

/** Valid type values, for the 400 that names them. */
export const serviceTypes: readonly ServiceType[] = SERVICE_TYPES;

export const isServiceType = (t: string): t is ServiceType => (SERVICE_TYPES as readonly string[]).includes(t);

/** The catalog entry of a type; throws on an unknown type (callers validate input first). */
export function kindOf(type: ServiceType): ServiceKind {
  const k = KINDS[type];
  if (!k) throw new Error(`unknown service type ${type}`);
  return k;
}

/** The image a service of this type and version is created from, and which setting chose it. */
export function imageFor(kind: ServiceKind, images: ServiceImages | undefined, version: string): { image: string; source: ImageSource } {
  const own = images?.byVersion?.[`${kind.type}:${version}`];
  if (own) return { image: own, source: 'version' };
  const typeWide = images?.[kind.type];
  if (typeWide) return { image: typeWide, source: 'type' };
  return { image: kind.officialImage(version), source: 'official' };
}

/** The variable that names one version's image: `SVC_IMAGE_POSTGRES_17`, `SVC_IMAGE_MYSQL_8_4`. */
export const versionImageVariable = (type: ServiceType, version: string) => `SVC_IMAGE_${type.toUpperCase()}_${versionSuffix(version)}`;

/** The data path inside the container for a version. */
export const dataPathOf = (kind: ServiceKind, version: string | null | undefined): string => (version && kind.dataPathAt?.(version)) || kind.dataPath;

/** The versions a type is offered at, oldest first. */
export const versionsOf = (type: ServiceType): readonly string[] => SERVICE_VERSIONS[type];

/** `<instance>-svc-<name>` (`svc-svc-<name>` for the legacy instance): the container and host name of a service. */
export const serviceContainerName = (instance: string, name: string) => `${instance}-svc-${name}`;

export { randomPassword } from './random.js';

/** Names of the variables a link injects: the type prefix, or the alias in its place. */
export function envKeys(kind: ServiceKind, alias?: string | null): string[] {
  const prefix = alias || kind.envPrefix;
  return kind.envFields.map(([suffix]) => `${prefix}_${suffix}`);
}

/** The variables a link injects into an app container, values from the credential fields. */
export function injectedEnv(kind: ServiceKind, creds: Credentials, place: ServicePlace, alias?: string | null): Record<string, string> {
  const fields = kind.credentialFields(creds, place);
  const prefix = alias || kind.envPrefix;
  const out: Record<string, string> = {};
  for (const [suffix, field] of kind.envFields) out[`${prefix}_${suffix}`] = String(fields[field] ?? '');
  return out;
}
