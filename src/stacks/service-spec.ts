// How one Compose service becomes one of svc's apps (docs/decisions/0046-stack-services-are-apps.md): the
// app row's fields (image, route, replicas, limits, strategy), the definition the app row and each deploy
// carry (`stack_service`: what apps lack, made into the container by appContainerSpec), and the comparison
// that tells a stack deploy which services changed. Pure: no store, no engine.
import { join, normalize, resolve, sep } from 'node:path';
import type { StackService } from './model.js';

/** What `apps.stack_service` and `deploys.stack_service` hold (JSON). */
export interface StackServiceSpec {
  stack: string;
  service: StackService;
}

/** App and stack names (nameSchema's grammar): a stack service's app is `<stack>-<service>`. */
const APP_NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** The app of service `service` of stack `stack`; undefined when the pair makes no valid app name. */
export function serviceAppName(stack: string, service: string): string | undefined {
  const name = `${stack}-${service.replace(/_/g, '-')}`;
  return APP_NAME.test(name) ? name : undefined;
}

/** A stack network on the engine: one per Compose network, under the instance's own network name. */
export const stackNetworkName = (svcNetwork: string, stack: string, network: string) => `${svcNetwork}-stack-${stack}_${network}`;
/** Every stack network of `stack` starts with this (the delete removes them by it); no stack name has a `_`, so no other stack's does. */
export const stackNetworkPrefix = (svcNetwork: string, stack: string) => `${svcNetwork}-stack-${stack}_`;

/** Label on every container of a stack service: the stack's name (the stack reconciler's cleanup lists by it). */
export const STACK_LABEL = 'svc.stack';

/**
 * A stateful service (a named volume) or one marked stop_first stops before its replacement starts. A
 * one-shot (`runsOnce`) never: its previous run has exited already, and a failed new run must not start the old one again.
 */
export const stopsFirst = (s: StackService): boolean => !s.runsOnce && (s.svc.strategy === 'stop_first' || s.volumes.some((v) => v.kind === 'named'));

/** Seconds from SIGTERM to SIGKILL for a container of this service: its `stop_grace_period` (rounded up), else svc's default. */
export const stopGraceSecondsOf = (s: StackService | undefined, fallback: number): number =>
  s?.stopGracePeriodMs === undefined ? fallback : Math.ceil(s.stopGracePeriodMs / 1000);

/** svc's HTTP check applies to a routed service without a Compose healthcheck; any other waits on Docker's. */
export const probesHttp = (s: StackService): boolean => s.route !== undefined && s.healthcheck?.kind !== 'command';

const MIB = 1024 * 1024;

/** The app row's fields for a service (store-shaped; the rest take the app defaults). */
export function serviceAppFields(s: StackService) {
  const route = s.route;
  return {
    appType: 'managed' as const,
    buildMode: 'external_ci' as const,
    imageRef: s.image ?? null,
    internalPort: route?.port ?? s.expose[0] ?? 80,
    accessMode: route?.kind === 'domain' ? ('domain' as const) : ('port' as const),
    domain: route?.kind === 'domain' ? route.domain : null,
    fallbackPort: route?.kind === 'port' ? route.publishedPort : null,
    healthCheckPath: s.svc.healthPath ?? '/',
    replicas: s.replicas,
    memoryMb: s.limits.memoryBytes === undefined ? null : Math.max(6, Math.round(s.limits.memoryBytes / MIB)),
    cpus: s.limits.cpus ?? null,
    deployStrategy: stopsFirst(s) ? ('stop_first' as const) : ('blue_green' as const),
  };
}

/** Canonical JSON of a value: object keys sorted, so equal definitions are equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * The Compose keys whose values differ between the running definition and the new one, sorted (`image`,
 * `environment.DB_URL`, `x-svc.links`); empty: the service is left alone. Environment keys are named, never
 * their values (they may be secrets).
 */
export function serviceChanges(running: StackService, next: StackService): string[] {
  const out: string[] = [];
  const keys = new Set([...Object.keys(running), ...Object.keys(next)]) as Set<keyof StackService>;
  for (const key of keys) {
    if (key === 'name') continue;
    const a = running[key];
    const b = next[key];
    if (canonicalJson(a) === canonicalJson(b)) continue;
    if (key === 'environment') {
      const ea = (a ?? {}) as Record<string, string>;
      const eb = (b ?? {}) as Record<string, string>;
      for (const k of new Set([...Object.keys(ea), ...Object.keys(eb)])) if (ea[k] !== eb[k]) out.push(`environment.${k}`);
    } else if (key === 'svc') {
      const sa = (a ?? {}) as unknown as Record<string, unknown>;
      const sb = (b ?? {}) as unknown as Record<string, unknown>;
      for (const k of new Set([...Object.keys(sa), ...Object.keys(sb)])) if (canonicalJson(sa[k]) !== canonicalJson(sb[k])) out.push(`x-svc.${k}`);
    } else {
      out.push(COMPOSE_KEY[key] ?? key);
    }
  }
  return out.sort();
}

/** The Compose spelling of a model field. */
const COMPOSE_KEY: Partial<Record<keyof StackService, string>> = {
  dependsOn: 'depends_on',
  replicas: 'deploy.replicas',
  limits: 'deploy.resources.limits',
  workingDir: 'working_dir',
  stopGracePeriodMs: 'stop_grace_period',
  route: 'ports',
};

/** Parses a stored `stack_service` (written only from StackServiceSpec values). */
export const parseServiceSpec = (text: string | null | undefined): StackServiceSpec | undefined => (text ? (JSON.parse(text) as StackServiceSpec) : undefined);

/** A bind mount's host path: inside `SVC_DATA_DIR/stacks/<stack>/`, never outside (checked again here). */
export function stackBindSource(dataDir: string, stack: string, source: string): string {
  const root = resolve(dataDir, 'stacks', stack);
  const path = resolve(root, normalize(source));
  if (!APP_NAME.test(stack) || (path !== root && !path.startsWith(root + sep))) throw new Error(`refusing bind mount source ${JSON.stringify(source)}: not inside the stack's directory`);
  return join(path);
}
