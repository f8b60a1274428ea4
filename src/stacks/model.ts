// A Compose file as svc runs it (issue 32): what src/stacks/compose/ reads out of a docker-compose.yml after
// validation against the Compose Specification's schema, interpolation from the stack's variables and the
// refusal rules. Everything downstream (the stack command, the plan, the reconciler that turns each service
// into one of svc's workloads) reads this shape and never the YAML. Times are milliseconds, sizes bytes,
// lists sorted where order carries no meaning, so two loads of the same file compare equal as JSON.

/** A Compose service name: also its DNS name on the stack's network and part of its container names. */
export const STACK_SERVICE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export type DependsOnCondition = 'service_started' | 'service_healthy' | 'service_completed_successfully';

export interface StackBuild {
  /** Relative to the repository's root (the Compose file's directory joined with the file's `context`). */
  context: string;
  dockerfile?: string;
  args: Record<string, string>;
  target?: string;
}

export type StackVolumeMount =
  /** A named volume of the stack's `volumes:`: an svc volume, in backups, kept on delete unless purged. */
  | { kind: 'named'; volume: string; target: string; readOnly: boolean }
  /** A bind mount whose source is inside the stack's own directory (relative to the repository's root like a build context, no `..`). */
  | { kind: 'bind'; source: string; target: string; readOnly: boolean };

export type StackHealthcheck =
  | { kind: 'disabled' }
  /** `test` as the engine takes it: ['CMD', ...] or ['CMD-SHELL', 'text']. */
  | { kind: 'command'; test: string[]; intervalMs: number; timeoutMs: number; retries: number; startPeriodMs: number };

/** How a service is reached from outside: svc's Caddy routes it; Docker publishes nothing. */
export type StackRoute =
  | { kind: 'domain'; domain: string; port: number }
  | { kind: 'port'; publishedPort: number; port: number };

export interface StackLink {
  /** The name of one of svc's managed services (postgres, mysql, redis, s3). */
  service: string;
  /** Prefix of the injected variables, as for apps' links; default from the service type. */
  alias?: string;
}

export interface StackJob {
  name: string;
  schedule: string;
  command: string[];
  timeoutSeconds?: number;
}

/** `x-svc` of one service. */
export interface StackServiceSvc {
  strategy?: 'blue_green' | 'stop_first';
  links: StackLink[];
  jobs: StackJob[];
  /** Path of svc's HTTP health check on the routed port when the service has no Compose healthcheck. */
  healthPath?: string;
}

export interface StackService {
  name: string;
  image?: string;
  build?: StackBuild;
  command?: string[];
  entrypoint?: string[];
  /** After interpolation and env_file merging; values are the final strings the container gets. */
  environment: Record<string, string>;
  expose: number[];
  route?: StackRoute;
  volumes: StackVolumeMount[];
  /** Container paths mounted as tmpfs. */
  tmpfs: string[];
  dependsOn: { service: string; condition: DependsOnCondition }[];
  healthcheck?: StackHealthcheck;
  restart: 'no' | 'always' | 'on-failure' | 'unless-stopped';
  replicas: number;
  limits: { cpus?: number; memoryBytes?: number };
  workingDir?: string;
  user?: string;
  labels: Record<string, string>;
  /** SIGTERM to SIGKILL when svc stops one of its containers (a drain's end, stop_first, a scale-down); svc's default (10 s) when unset. */
  stopGracePeriodMs?: number;
  init: boolean;
  /**
   * Set (true) on a service another waits on with `service_completed_successfully`: a one-shot such as a
   * migration. Its deploy succeeds when it exits 0 (fails on any other code), it has no route, one
   * replica, and an exited container is never restarted. Absent otherwise (older stored definitions compare equal).
   */
  runsOnce?: true;
  /** The stack's own networks this service joins (default: ['default']). */
  networks: string[];
  svc: StackServiceSvc;
}

export interface ComposeStack {
  /** In `depends_on` order (a dependency before what depends on it), then by name. */
  services: StackService[];
  /** Named volumes declared at the top level. */
  volumes: string[];
  /** The stack's networks (always includes 'default'). */
  networks: string[];
}

/** Why a file cannot run: a 400 names the service (when there is one) and the key. */
export interface ComposeProblem {
  service?: string;
  /** The Compose key, dotted (`cap_add`, `volumes[1].source`, `deploy.resources.limits.memory`). */
  key: string;
  message: string;
}

export type ComposeLoad = { ok: true; stack: ComposeStack; warnings: string[] } | { ok: false; problems: ComposeProblem[] };

/**
 * What the loader needs beyond the text: the stack's variables for interpolation, and the repository's files
 * for `env_file` (a path relative to the Compose file's directory; undefined when it does not exist).
 */
export interface ComposeInput {
  text: string;
  variables: Record<string, string>;
  readFile?: (relativePath: string) => string | undefined;
  /** The Compose file's directory relative to the repository's root ('.', the default, for a pasted file). */
  composeDir?: string;
}
