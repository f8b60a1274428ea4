// One typed Config from the process environment and the `.env` file in the working directory
// (environment wins). Every value is validated by zod so a bad setting stops the start with one line
// naming the variable, instead of failing later in the middle of work.
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import type { ServiceImages } from './catalog/catalog.js';
import { SERVICE_TYPES, SERVICE_VERSIONS, versionSuffix } from './catalog/types.js';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(1).max(65535);
const nonNegInt = z.coerce.number().int().min(0);
const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

const encryptionKey = z
  .string()
  .refine((v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32, {
    message: 'must be the base64 encoding of exactly 32 bytes (openssl rand -base64 32)',
  });

const schema = z.object({
  SVC_PORT: port.default(3000),
  SVC_HOST: z.string().default('0.0.0.0'),
  SVC_DATA_DIR: z.string().default('./data'),
  SVC_ENCRYPTION_KEY: encryptionKey,
  SVC_PUBLIC_URL: optional.pipe(z.string().url().optional()),
  DOCKER_HOST: optional,
  SVC_RUNTIME: z.enum(['docker', 'swarm']).default('docker'),
  SVC_REGISTRY: optional.pipe(z.string().regex(/^[a-zA-Z0-9.-]+(:\d{1,5})?(\/[a-z0-9._-]+)*$/, 'host[:port][/path] of a registry').optional()),
  SVC_PROBE_IMAGE: optional,
  SVC_RESOLVER_IMAGE: optional,
  SVC_PROXY_MODE: z.enum(['auto', 'container', 'host', 'external']).default('auto'),
  SVC_PROXY_IMAGE: z.string().default('caddy:2'),
  // Host mode: the Caddy binary svc runs (Debian's by default; e.g. a newer one unpacked elsewhere).
  SVC_PROXY_BIN: z.string().startsWith('/').default('/usr/bin/caddy'),
  SVC_PROXY_ADMIN_URL: z.string().url().default('http://127.0.0.1:2019'),
  SVC_HTTP_PORT: port.default(80),
  SVC_HTTPS_PORT: port.default(443),
  SVC_ACME_EMAIL: optional,
  SVC_TLS_ISSUER: z.enum(['acme', 'internal']).default('acme'),
  // The ACME directory (default: Caddy's, Let's Encrypt then ZeroSSL); e.g. Let's Encrypt staging.
  SVC_ACME_CA: z.string().url().optional(),
  // External mode only: a file both svc and that Caddy can use, where Caddy writes its TLS log.
  SVC_PROXY_TLS_LOG: z.string().startsWith('/').optional(),
  SVC_DNS_PORT: port.default(15353),
  SVC_NETWORK: optional.pipe(z.string().regex(/^[a-z][a-z0-9_.-]{0,62}$/).optional()),
  SVC_INSTANCE: optional.pipe(z.string().regex(/^[a-z][a-z0-9-]{0,30}$/).optional()),
  // Unset: the official image of the service's version (catalog); SVC_IMAGE_<TYPE>_<MAJOR> wins (versionImages).
  SVC_IMAGE_POSTGRES: optional,
  SVC_IMAGE_MYSQL: optional,
  SVC_IMAGE_REDIS: optional,
  SVC_IMAGE_GARAGE: optional,
  SVC_BACKUP_INTERVAL_MINUTES: nonNegInt.default(0),
  SVC_BACKUP_RETAIN_COUNT: z.coerce.number().int().min(1).default(10),
  SVC_BACKUP_DIR: optional,
  SVC_BACKUP_PASSPHRASE: optional,
  SVC_BACKUP_AGE_RECIPIENT: optional.pipe(z.string().regex(/^age1[0-9a-z]+$/, 'an age recipient (age1...)').optional()),
  SVC_BACKUP_REMOTE_RETAIN_COUNT: optional.pipe(z.string().regex(/^[1-9][0-9]*$/, 'a positive integer').transform(Number).optional()),
  SVC_BACKUP_REMOTE_RETRY_SECONDS: z.coerce.number().int().min(1).default(60),
  SVC_BACKUP_SCRYPT_WORK_FACTOR: z.coerce.number().int().min(10).max(22).default(18),
  SVC_MANIFESTS_DIR: z.string().default('./manifests'),
  SVC_MANIFESTS_GIT_URL: optional,
  SVC_MANIFESTS_GIT_BRANCH: z.string().default('main'),
  SVC_MANIFESTS_GIT_PATH: z.string().default(''),
  SVC_MANIFESTS_GIT_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(60),
  SVC_MANIFESTS_PRUNE_SERVICES: bool.default(false),
  SVC_CODEHOST_WEBHOOK_SECRET: optional,
  /** Per-host webhook secrets (issue 20); each unset one falls back to SVC_CODEHOST_WEBHOOK_SECRET. */
  SVC_GITLAB_WEBHOOK_TOKEN: optional,
  SVC_GITEA_WEBHOOK_SECRET: optional,
  SVC_FORGEJO_WEBHOOK_SECRET: optional,
  /** Ports of port-mode pull-request previews (issue 20): `20000-20999`; unset: port-mode apps get no previews. */
  SVC_PREVIEW_PORTS: optional.pipe(z.string().regex(/^\s*\d{1,5}\s*(-\s*\d{1,5}\s*)?$/, 'must be a port or a range like 20000-20999').optional()),
  SVC_CODEHOST_APP_ID: optional,
  SVC_CODEHOST_APP_SLUG: optional,
  SVC_CODEHOST_APP_PRIVATE_KEY: optional,
  SVC_CODEHOST_APP_CLIENT_ID: optional,
  SVC_CODEHOST_APP_CLIENT_SECRET: optional,
  SVC_CODEHOST_API_URL: z.string().url().default('https://api.github.com'),
  SVC_CODEHOST_WEB_URL: z.string().url().default('https://github.com'),
  SVC_DEBUG_ENDPOINTS: bool.default(false),
  SVC_DEPLOY_WATCH_SECONDS: nonNegInt.default(60),
  SVC_BUILD_IMAGE_STATIC: z.string().default('caddy:2-alpine'),
  SVC_BUILD_IMAGE_NODE: z.string().default('node:20-alpine'),
  SVC_BUILD_IMAGE_GO: z.string().default('golang:1-alpine'),
  SVC_BUILD_IMAGE_GO_RUNTIME: z.string().default('alpine:3'),
  SVC_BUILD_IMAGE_MAVEN: z.string().default('maven:3-eclipse-temurin-21'),
  SVC_BUILD_IMAGE_GRADLE: z.string().default('gradle:8-jdk21'),
  SVC_BUILD_IMAGE_JAVA_RUNTIME: z.string().default('eclipse-temurin:21-jre'),
  SVC_RESYNC_SECONDS: z.coerce.number().int().min(1).default(300),
  SVC_METRICS_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(60).default(10),
  SVC_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type Env = z.infer<typeof schema>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  dbPath: string;
  backupDir: string;
  envFile: string;
  encryptionKey: Buffer;
  publicUrl: string | undefined;
  dockerHost: string | undefined;
  /**
   * SVC_RUNTIME: `docker` drives the one engine (today's behaviour); `swarm` drives a Swarm from a manager
   * node (issue 19). `registry` (SVC_REGISTRY): where svc_build images are pushed so every node can pull
   * them. `probeImage` (SVC_PROBE_IMAGE, default the proxy image): the helper health probes run in.
   * `resolverImage` (SVC_RESOLVER_IMAGE): on a Swarm, an image with Debian's /usr/sbin/dnsmasq, the edge
   * relays' resolver (docs/decisions/0047-swarm-edge-resolves.md); unset, svc builds one from the host's
   * dnsmasq (docs/decisions/0058-own-resolver-image.md).
   */
  runtime: { kind: 'docker' | 'swarm'; registry: string | undefined; probeImage: string; resolverImage: string | undefined };
  proxy: {
    /** auto: container when its image is present or pullable, else host (see src/proxy/runner.ts). */
    mode: 'auto' | 'container' | 'host' | 'external';
    image: string;
    /** SVC_PROXY_BIN: the Caddy binary of host mode. */
    bin: string;
    adminUrl: string;
    httpPort: number;
    httpsPort: number;
    acmeEmail: string | undefined;
    tlsIssuer: 'acme' | 'internal';
    acmeCa: string | undefined;
    /**
     * Where Caddy writes its TLS log (certificate failures, src/certs/), as Caddy sees it and as svc
     * reads it: `{env.XDG_DATA_HOME}/svc-tls.log` = <data>/proxy/data/svc-tls.log for a Caddy svc runs
     * (host or container, both set XDG_DATA_HOME to that directory); SVC_PROXY_TLS_LOG in external mode,
     * else none (a Caddy on another machine could not write svc's file).
     */
    tlsLog: { caddyPath: string; svcPath: string } | undefined;
    dnsPort: number;
  };
  /**
   * The Docker network of apps and services: SVC_NETWORK, else the instance's name. Like `instance`, final
   * only after `withInstance` (startDaemon does it once the database is open).
   */
  network: string;
  /**
   * The `svc.instance` label of this daemon's containers and the prefix of their names (store/instance.ts).
   * parseConfig sets SVC_INSTANCE or the legacy `svc`; startDaemon replaces it with the data directory's.
   */
  instance: string;
  /** SVC_INSTANCE and SVC_NETWORK as set (undefined: the data directory's identity decides). */
  instanceOverride: string | undefined;
  networkOverride: string | undefined;
  /** SVC_IMAGE_<TYPE> and SVC_IMAGE_<TYPE>_<MAJOR> (catalog's imageFor says which wins). */
  images: ServiceImages;
  backup: { intervalMinutes: number; retainCount: number };
  /** Off-host copies (src/offsite): the age key uploads are encrypted for, remote retention, retry base. */
  offsite: { passphrase: string | undefined; ageRecipient: string | undefined; retainCount: number; retrySeconds: number; scryptWorkFactor: number };
  manifests: {
    dir: string;
    gitUrl: string | undefined;
    gitBranch: string;
    gitPath: string;
    gitIntervalSeconds: number;
    pruneServices: boolean;
  };
  codehost: {
    webhookSecret: string | undefined;
    appId: string | undefined;
    appSlug: string | undefined;
    privateKeyPath: string | undefined;
    clientId: string | undefined;
    clientSecret: string | undefined;
    apiUrl: string;
    webUrl: string;
    /** Secrets of the other hosts' webhooks; undefined: the webhook secret above. */
    hostSecrets: { gitlab: string | undefined; gitea: string | undefined; forgejo: string | undefined };
  };
  /** Inclusive port range of port-mode previews; undefined: none. */
  previewPorts: { from: number; to: number } | undefined;
  debugEndpoints: boolean;
  /** Seconds a successful deploy is watched after its switch (flip-back); 0 turns the watch off. */
  deployWatchSeconds: number;
  /** Base images of the Dockerfiles the `svc_build` providers generate. */
  buildImages: { static: string; node: string; go: string; goRuntime: string; maven: string; gradle: string; javaRuntime: string };
  resyncMs: number;
  /** Seconds between two metrics rounds (issue 22: 10; tests shorten it). */
  metricsIntervalMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** The effective SVC_* settings, written into backups as `.env` so a restore needs nothing else. */
  effectiveEnv: Record<string, string>;
}

export class ConfigError extends Error {}

/**
 * `SVC_IMAGE_<TYPE>_<MAJOR>` (`SVC_IMAGE_POSTGRES_17`, `SVC_IMAGE_MYSQL_8_4`) keyed `postgres:17`: one
 * version's image. A variable naming a version svc does not offer stops the start (it would never be used).
 */
export function versionImages(vars: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) {
    const m = /^SVC_IMAGE_([A-Z]+)_(\d+(?:_\d+)?)$/.exec(k);
    if (!m || !v) continue;
    const type = SERVICE_TYPES.find((t) => t.toUpperCase() === m[1]);
    if (!type) continue;
    const version = SERVICE_VERSIONS[type].find((x) => versionSuffix(x) === m[2]);
    if (!version) throw new ConfigError(`invalid configuration: ${k}: ${type} is offered at versions ${SERVICE_VERSIONS[type].join(', ')}`);
    out[`${type}:${version}`] = v;
  }
  return out;
}

/** The configuration with this data directory's identity: its label and, unless SVC_NETWORK says otherwise, its network. */
export const withInstance = (config: Config, instance: string): Config => ({ ...config, instance, network: config.networkOverride ?? instance });

/** Reads `.env` (if any) without touching process.env. */
export function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
}

/** Parses and validates; throws ConfigError with one line per bad variable. Pure apart from reading nothing. */
export function parseConfig(vars: Record<string, string | undefined>, envFile = resolve('.env')): Config {
  const result = schema.safeParse(vars);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const e = result.data;
  const dataDir = resolve(e.SVC_DATA_DIR);
  const effectiveEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) if (k.startsWith('SVC_') && v !== undefined) effectiveEnv[k] = v;
  return {
    port: e.SVC_PORT,
    host: e.SVC_HOST,
    dataDir,
    dbPath: resolve(dataDir, 'svc.db'),
    backupDir: resolve(e.SVC_BACKUP_DIR ?? resolve(dataDir, 'backups')),
    envFile,
    encryptionKey: Buffer.from(e.SVC_ENCRYPTION_KEY, 'base64'),
    publicUrl: e.SVC_PUBLIC_URL?.replace(/\/+$/, ''),
    dockerHost: e.DOCKER_HOST,
    runtime: { kind: e.SVC_RUNTIME, registry: e.SVC_REGISTRY, probeImage: e.SVC_PROBE_IMAGE ?? e.SVC_PROXY_IMAGE, resolverImage: e.SVC_RESOLVER_IMAGE },
    proxy: {
      mode: e.SVC_PROXY_MODE,
      image: e.SVC_PROXY_IMAGE,
      bin: e.SVC_PROXY_BIN,
      adminUrl: e.SVC_PROXY_ADMIN_URL.replace(/\/+$/, ''),
      httpPort: e.SVC_HTTP_PORT,
      httpsPort: e.SVC_HTTPS_PORT,
      acmeEmail: e.SVC_ACME_EMAIL,
      tlsIssuer: e.SVC_TLS_ISSUER,
      acmeCa: e.SVC_ACME_CA,
      tlsLog:
        e.SVC_PROXY_MODE === 'external'
          ? e.SVC_PROXY_TLS_LOG
            ? { caddyPath: e.SVC_PROXY_TLS_LOG, svcPath: e.SVC_PROXY_TLS_LOG }
            : undefined
          : { caddyPath: '{env.XDG_DATA_HOME}/svc-tls.log', svcPath: resolve(dataDir, 'proxy', 'data', 'svc-tls.log') },
      dnsPort: e.SVC_DNS_PORT,
    },
    network: e.SVC_NETWORK ?? e.SVC_INSTANCE ?? 'svc',
    instance: e.SVC_INSTANCE ?? 'svc',
    instanceOverride: e.SVC_INSTANCE,
    networkOverride: e.SVC_NETWORK,
    images: {
      postgres: e.SVC_IMAGE_POSTGRES,
      mysql: e.SVC_IMAGE_MYSQL,
      redis: e.SVC_IMAGE_REDIS,
      garage: e.SVC_IMAGE_GARAGE,
      byVersion: versionImages(vars),
    },
    backup: { intervalMinutes: e.SVC_BACKUP_INTERVAL_MINUTES, retainCount: e.SVC_BACKUP_RETAIN_COUNT },
    offsite: {
      passphrase: e.SVC_BACKUP_PASSPHRASE,
      ageRecipient: e.SVC_BACKUP_AGE_RECIPIENT,
      retainCount: e.SVC_BACKUP_REMOTE_RETAIN_COUNT ?? e.SVC_BACKUP_RETAIN_COUNT,
      retrySeconds: e.SVC_BACKUP_REMOTE_RETRY_SECONDS,
      scryptWorkFactor: e.SVC_BACKUP_SCRYPT_WORK_FACTOR,
    },
    manifests: {
      dir: resolve(e.SVC_MANIFESTS_DIR),
      gitUrl: e.SVC_MANIFESTS_GIT_URL,
      gitBranch: e.SVC_MANIFESTS_GIT_BRANCH,
      gitPath: e.SVC_MANIFESTS_GIT_PATH,
      gitIntervalSeconds: e.SVC_MANIFESTS_GIT_INTERVAL_SECONDS,
      pruneServices: e.SVC_MANIFESTS_PRUNE_SERVICES,
    },
    codehost: {
      webhookSecret: e.SVC_CODEHOST_WEBHOOK_SECRET,
      appId: e.SVC_CODEHOST_APP_ID,
      appSlug: e.SVC_CODEHOST_APP_SLUG,
      privateKeyPath: e.SVC_CODEHOST_APP_PRIVATE_KEY,
      clientId: e.SVC_CODEHOST_APP_CLIENT_ID,
      clientSecret: e.SVC_CODEHOST_APP_CLIENT_SECRET,
      apiUrl: e.SVC_CODEHOST_API_URL.replace(/\/+$/, ''),
      webUrl: e.SVC_CODEHOST_WEB_URL.replace(/\/+$/, ''),
      hostSecrets: { gitlab: e.SVC_GITLAB_WEBHOOK_TOKEN, gitea: e.SVC_GITEA_WEBHOOK_SECRET, forgejo: e.SVC_FORGEJO_WEBHOOK_SECRET },
    },
    previewPorts: parsePortRange(e.SVC_PREVIEW_PORTS),
    debugEndpoints: e.SVC_DEBUG_ENDPOINTS,
    deployWatchSeconds: e.SVC_DEPLOY_WATCH_SECONDS,
    buildImages: {
      static: e.SVC_BUILD_IMAGE_STATIC,
      node: e.SVC_BUILD_IMAGE_NODE,
      go: e.SVC_BUILD_IMAGE_GO,
      goRuntime: e.SVC_BUILD_IMAGE_GO_RUNTIME,
      maven: e.SVC_BUILD_IMAGE_MAVEN,
      gradle: e.SVC_BUILD_IMAGE_GRADLE,
      javaRuntime: e.SVC_BUILD_IMAGE_JAVA_RUNTIME,
    },
    resyncMs: e.SVC_RESYNC_SECONDS * 1000,
    metricsIntervalMs: e.SVC_METRICS_INTERVAL_SECONDS * 1000,
    logLevel: e.SVC_LOG_LEVEL,
    effectiveEnv,
  };
}

/**
 * Loads the configuration for `svc serve`: `.env` merged under the environment. A missing encryption key
 * is generated once and appended to `.env` (mode 600) so that restarts keep decrypting what was sealed.
 */
export function loadConfig(opts: { envFile?: string; env?: NodeJS.ProcessEnv; log?: (msg: string) => void } = {}): Config {
  const envFile = resolve(opts.envFile ?? '.env');
  const fromFile = readEnvFile(envFile);
  const vars: Record<string, string | undefined> = { ...fromFile, ...(opts.env ?? process.env) };
  if (!vars.SVC_ENCRYPTION_KEY) {
    const key = randomBytes(32).toString('base64');
    const prefix = existsSync(envFile) && !readFileSync(envFile, 'utf8').endsWith('\n') ? '\n' : '';
    writeFileSync(envFile, `${prefix}SVC_ENCRYPTION_KEY=${key}\n`, { flag: 'a', mode: 0o600 });
    chmodSync(envFile, 0o600);
    vars.SVC_ENCRYPTION_KEY = key;
    opts.log?.(`generated SVC_ENCRYPTION_KEY and wrote it to ${envFile}; keep it: without it the secrets in the database cannot be decrypted (backups are not encrypted: they carry a copy of it)`);
  }
  return parseConfig(vars, envFile);
}

/** `SVC_PREVIEW_PORTS`, `20000-20999` (or one port): the inclusive range, or undefined when unset or backwards. */
export function parsePortRange(text: string | undefined): { from: number; to: number } | undefined {
  const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(text ?? '');
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  return from >= 1 && to <= 65535 && from <= to ? { from, to } : undefined;
}
