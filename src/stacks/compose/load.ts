// A Compose file read the way the Compose Specification reads it, into the ComposeStack svc runs
// (src/stacks/model.ts): YAML (anchors and merge keys), interpolation from the stack's variables (and the
// repository's `.env` under them, as Compose reads it), the specification's own JSON schema, same-file
// `extends`, profiles off, then each service normalised and checked against svc's refusal rules (keys.ts),
// and the services ordered by `depends_on`. Pure: the only I/O is input.readFile.
import { parseDocument } from 'yaml';
import type { ComposeInput, ComposeLoad, ComposeStack } from '../model.js';
import { STACK_SERVICE_NAME } from '../model.js';
import { DotenvError, parseDotenv } from './dotenv.js';
import { interpolateTree, type Interpolation } from './interpolate.js';
import { TOP_LEVEL_KEYS } from './keys.js';
import { problemAt, schemaProblems } from './schema.js';
import { isObject, listOrDict, Report } from './report.js';
import { loadService, type LoadedService } from './service.js';

const HOST = 'a stack never gets the host';

export function loadCompose(input: ComposeInput): ComposeLoad {
  const report = new Report();
  const fail = (): ComposeLoad => ({ ok: false, problems: report.problems });
  const composeDir = input.composeDir ?? '.';

  const doc = parseDocument(input.text, { merge: true, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors.slice(0, 5)) report.refuse(undefined, 'yaml', e.message.split('\n')[0]);
    return fail();
  }
  let tree: unknown;
  try {
    tree = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    report.refuse(undefined, 'yaml', (e as Error).message);
    return fail();
  }
  if (!isObject(tree)) {
    report.refuse(undefined, 'yaml', 'a Compose file is a mapping with a services key');
    return fail();
  }

  // The stack's variables win over the repository's .env, which Compose reads for interpolation.
  const interpolation: Interpolation = { variables: { ...input.variables }, unset: new Set() };
  const dotenv = input.readFile?.('.env');
  if (dotenv !== undefined) {
    try {
      interpolation.variables = { ...parseDotenv(dotenv, { variables: input.variables, unset: new Set() }), ...input.variables };
    } catch (e) {
      if (!(e instanceof DotenvError)) throw e;
      report.refuse(undefined, '.env', e.message);
    }
  }
  const interpolationErrors: { path: (string | number)[]; message: string }[] = [];
  const file = interpolateTree(tree, interpolation, interpolationErrors) as Record<string, unknown>;
  for (const e of interpolationErrors) report.problems.push(problemAt(e.path, e.message));
  for (const name of [...interpolation.unset].sort()) report.warn(undefined, 'interpolation', `the variable ${name} is not set: an empty string is used`);
  if (report.problems.length > 0) return fail();

  report.problems.push(...schemaProblems(file));
  if (report.problems.length > 0) return fail();

  for (const key of Object.keys(file)) {
    if (key.startsWith('x-')) continue;
    const rule = TOP_LEVEL_KEYS[key];
    if (!rule) report.refuse(undefined, key, 'is not a key svc knows');
    else if ('ignore' in rule) report.warn(undefined, key, `ignored: ${rule.ignore}`);
    else if ('refuse' in rule && key !== 'secrets' && key !== 'configs') report.refuse(undefined, key, rule.refuse);
  }
  for (const kind of ['secrets', 'configs'] as const) {
    for (const [name, def] of Object.entries(isObject(file[kind]) ? file[kind] : {})) {
      const d = isObject(def) ? def : {};
      if (d.file !== undefined) report.refuse(undefined, `${kind}.${name}.file`, `reads a file of the host: ${HOST}`);
      else if (d.environment !== undefined) report.refuse(undefined, `${kind}.${name}.environment`, `reads the host's environment: ${HOST}; use a stack variable`);
      else report.refuse(undefined, `${kind}.${name}`, TOP_LEVEL_KEYS[kind] && 'refuse' in TOP_LEVEL_KEYS[kind] ? TOP_LEVEL_KEYS[kind].refuse : 'not supported');
    }
  }

  const volumes = topLevelVolumes(file.volumes, report);
  const networks = topLevelNetworks(file.networks, report);

  const rawServices = isObject(file.services) ? file.services : {};
  const resolved = resolveExtends(rawServices, report);
  const loaded = new Map<string, LoadedService>();
  const off = new Set<string>();
  const anonymous: string[] = [];
  for (const [name, raw] of Object.entries(resolved)) {
    if (!STACK_SERVICE_NAME.test(name)) {
      report.refuse(name, 'services', 'a service name is lowercase letters, digits, _ and - (it is a DNS name on the stack network), at most 63 characters');
      continue;
    }
    if (raw.profiles !== undefined) {
      off.add(name);
      report.warn(name, 'profiles', `off: svc runs no profile (${(Array.isArray(raw.profiles) ? raw.profiles : [raw.profiles]).join(', ')})`);
      continue;
    }
    const l = loadService(name, raw, { report, interpolation, readFile: input.readFile, composeDir, volumes, networks });
    loaded.set(name, l);
    anonymous.push(...l.anonymousVolumes);
  }
  if (loaded.size === 0 && report.problems.length === 0) report.refuse(undefined, 'services', 'the file runs no service (every one is under a profile, or there is none)');

  crossChecks(loaded, off, report);
  const order = dependencyOrder(loaded, report);
  if (report.problems.length > 0) return fail();

  const stack: ComposeStack = {
    services: order.map((n) => loaded.get(n)!.service),
    volumes: [...new Set([...volumes, ...anonymous])].sort(),
    networks: [...networks].sort(),
  };
  return { ok: true, stack, warnings: report.warnings };
}

function topLevelVolumes(value: unknown, report: Report): Set<string> {
  const out = new Set<string>();
  for (const [name, def] of Object.entries(isObject(value) ? value : {})) {
    const d = isObject(def) ? def : {};
    if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(name)) {
      report.refuse(undefined, `volumes.${name}`, 'a volume name is lowercase letters, digits, _, . and -, at most 63 characters');
      continue;
    }
    if (d.external !== undefined && d.external !== false && d.external !== 'false') report.refuse(undefined, `volumes.${name}.external`, `an external volume is made outside the stack: ${HOST}; svc creates the stack's volumes`);
    if (d.driver !== undefined && d.driver !== 'local') report.refuse(undefined, `volumes.${name}.driver`, `svc volumes use the local driver`);
    if (d.driver_opts !== undefined) report.refuse(undefined, `volumes.${name}.driver_opts`, `driver options can mount host paths or devices: ${HOST}`);
    for (const k of ['name', 'labels']) if (d[k] !== undefined) report.warn(undefined, `volumes.${name}.${k}`, 'ignored: svc names and labels the volumes of a stack');
    out.add(name);
  }
  return out;
}

function topLevelNetworks(value: unknown, report: Report): Set<string> {
  const out = new Set<string>(['default']);
  for (const [name, def] of Object.entries(isObject(value) ? value : {})) {
    const d = isObject(def) ? def : {};
    if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(name)) {
      report.refuse(undefined, `networks.${name}`, 'a network name is lowercase letters, digits, _, . and -, at most 63 characters');
      continue;
    }
    if (d.external !== undefined && d.external !== false && d.external !== 'false') report.refuse(undefined, `networks.${name}.external`, `an external network joins containers outside the stack: ${HOST}`);
    if (d.driver !== undefined && ['host', 'none', 'macvlan', 'ipvlan'].includes(String(d.driver))) report.refuse(undefined, `networks.${name}.driver`, `the ${String(d.driver)} driver reaches the host's network: ${HOST}`);
    for (const k of Object.keys(d)) if (!['external', 'driver'].includes(k) && !k.startsWith('x-')) report.warn(undefined, `networks.${name}.${k}`, 'ignored: svc makes each stack network a plain bridge');
    if (d.driver !== undefined && !['bridge', 'host', 'none', 'macvlan', 'ipvlan'].includes(String(d.driver))) report.warn(undefined, `networks.${name}.driver`, `ignored: ${String(d.driver)}; svc makes each stack network a plain bridge`);
    out.add(name);
  }
  return out;
}

/** Keys whose values extends merges as maps (list or map syntax alike), per compose-spec 13-merge.md. */
const MAP_KEYS = new Set(['environment', 'labels']);
/** Keys whose lists extends concatenates (unique); `volumes` merges by target. Everything else is replaced or merged as a mapping. */
const LIST_KEYS = new Set(['ports', 'expose', 'env_file', 'tmpfs', 'dns', 'dns_search', 'extra_hosts', 'security_opt', 'cap_drop', 'label_file', 'profiles']);

function mergeService(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = base[k];
    if (b === undefined) out[k] = v;
    else if (MAP_KEYS.has(k)) out[k] = { ...listOrDict(b), ...listOrDict(v) };
    else if (LIST_KEYS.has(k) && Array.isArray(b) && Array.isArray(v)) out[k] = [...new Set([...b, ...v].map((x) => JSON.stringify(x)))].map((x) => JSON.parse(x) as unknown);
    else if (k === 'volumes' && Array.isArray(b) && Array.isArray(v)) {
      const target = (x: unknown) => (isObject(x) ? String(x.target) : String(x).split(':')[String(x).split(':').length > 1 ? 1 : 0]);
      const byTarget = new Map<string, unknown>();
      for (const x of [...b, ...v]) byTarget.set(target(x), x);
      out[k] = [...byTarget.values()];
    } else if (k === 'depends_on') {
      const asMap = (x: unknown) => (Array.isArray(x) ? Object.fromEntries(x.map((s) => [String(s), { condition: 'service_started' }])) : isObject(x) ? x : {});
      out[k] = { ...asMap(b), ...asMap(v) };
    } else if (isObject(b) && isObject(v) && k !== 'command' && k !== 'entrypoint') out[k] = mergeService(b, v);
    else out[k] = v;
  }
  return out;
}

/** Every service with its same-file `extends` merged in; `extends: {file: ...}` is refused. */
function resolveExtends(services: Record<string, unknown>, report: Report): Record<string, Record<string, unknown>> {
  const done = new Map<string, Record<string, unknown>>();
  const resolve = (name: string, seen: string[]): Record<string, unknown> => {
    const cached = done.get(name);
    if (cached) return cached;
    const raw = isObject(services[name]) ? (services[name] as Record<string, unknown>) : {};
    if (raw.extends === undefined) {
      done.set(name, raw);
      return raw;
    }
    const { extends: ext, ...own } = raw;
    const e = isObject(ext) ? ext : { service: ext };
    let result = own;
    if (e.file !== undefined) report.refuse(name, 'extends.file', 'extends from another file is not supported: merge the service into this file');
    else if (seen.includes(String(e.service))) report.refuse(name, 'extends', `extends goes round in a circle: ${[...seen, String(e.service)].join(' -> ')}`);
    else if (!isObject(services[String(e.service)])) report.refuse(name, 'extends.service', `there is no service "${String(e.service)}" in this file`);
    else {
      const base = { ...resolve(String(e.service), [...seen, name]) };
      // A service never inherits these (compose-spec 05-services.md "extends" restrictions).
      delete base.depends_on;
      delete base.profiles;
      result = mergeService(base, own);
    }
    done.set(name, result);
    return result;
  };
  return Object.fromEntries(Object.keys(services).map((n) => [n, resolve(n, [])]));
}

function crossChecks(loaded: Map<string, LoadedService>, off: Set<string>, report: Report): void {
  const published = new Map<number, string>();
  const domains = new Map<string, string>();
  for (const [name, l] of loaded) {
    for (const d of l.dependsOn) {
      const target = loaded.get(d.service);
      if (!target) {
        const why = off.has(d.service) ? `is off (it has profiles)` : 'is not a service of this file';
        if (d.required) report.refuse(name, `depends_on.${d.service}`, `"${d.service}" ${why}`);
        else report.warn(name, `depends_on.${d.service}`, `left out: "${d.service}" ${why} and the dependency is not required`);
        continue;
      }
      if (d.condition === 'service_healthy' && target.service.healthcheck?.kind !== 'command')
        report.refuse(name, `depends_on.${d.service}.condition`, `service_healthy needs a healthcheck on "${d.service}" (it has none in this file)`);
      if (d.condition === 'service_completed_successfully') target.service.runsOnce = true;
      l.service.dependsOn.push({ service: d.service, condition: d.condition });
    }
    l.service.dependsOn.sort((a, b) => (a.service < b.service ? -1 : 1));
    const route = l.service.route;
    if (route?.kind === 'port') {
      const other = published.get(route.publishedPort);
      if (other) report.refuse(name, 'ports', `port ${route.publishedPort} is already published by "${other}"`);
      else published.set(route.publishedPort, name);
    }
    if (route?.kind === 'domain') {
      const other = domains.get(route.domain);
      if (other) report.refuse(name, 'x-svc.domain', `${route.domain} is already routed to "${other}"`);
      else domains.set(route.domain, name);
    }
  }
  for (const [name, l] of loaded) if (l.service.runsOnce) oneShotChecks(name, l.service, report);
}

/** A service waited on with service_completed_successfully runs to its exit once: nothing may route to it or copy it. */
function oneShotChecks(name: string, s: LoadedService['service'], report: Report): void {
  const why = 'runs once to completion (another service waits on it with service_completed_successfully)';
  if (s.route) report.refuse(name, s.route.kind === 'domain' ? 'x-svc.domain' : 'ports', `${why}: it cannot be routed`);
  if (s.replicas !== 1) report.refuse(name, 'deploy.replicas', `${why}: it runs as one container`);
  if (s.svc.jobs.length > 0) report.refuse(name, 'x-svc.jobs', `${why}: jobs run in a service that stays up`);
  if (s.restart === 'always' || s.restart === 'unless-stopped') report.warn(name, 'restart', `ignored: ${s.restart}; a service that ${why} is not restarted once it exited 0`);
}

/** Service names with every dependency before what depends on it, ties by name; a cycle is a problem. */
function dependencyOrder(loaded: Map<string, LoadedService>, report: Report): string[] {
  const pending = new Map<string, Set<string>>();
  for (const [name, l] of loaded) pending.set(name, new Set(l.service.dependsOn.map((d) => d.service).filter((s) => loaded.has(s))));
  const order: string[] = [];
  while (pending.size > 0) {
    const ready = [...pending].filter(([, deps]) => deps.size === 0).map(([n]) => n).sort();
    if (ready.length === 0) {
      const cycle = [...pending.keys()].sort();
      report.refuse(cycle[0], 'depends_on', `depends_on goes round in a circle between ${cycle.join(', ')}`);
      break;
    }
    const next = ready[0];
    order.push(next);
    pending.delete(next);
    for (const deps of pending.values()) deps.delete(next);
  }
  return order;
}
