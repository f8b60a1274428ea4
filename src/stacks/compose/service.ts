// One Compose service, already interpolated and valid against the schema, as the StackService svc runs:
// short and long syntaxes normalised, units converted, env_file merged, refusals named on the report.
import { posix } from 'node:path';
import { isImageRef } from '../../runtime/references.js';
import type { DependsOnCondition, StackBuild, StackHealthcheck, StackService } from '../model.js';
import { DotenvError, parseDotenv } from './dotenv.js';
import type { Interpolation } from './interpolate.js';
import { SERVICE_KEYS } from './keys.js';
import { insideStack } from './paths.js';
import { parseExpose, routePorts } from './ports.js';
import { isObject, listOrDict, sortedRecord, type Report } from './report.js';
import { ShellWordsError, shellWords } from './shell-words.js';
import { bytes, cpus, durationMs } from './units.js';
import { serviceVolumes } from './volumes.js';
import { svcSettings, X_SVC_KEYS, xSvcSchema } from './x-svc.js';

export interface ServiceContext {
  report: Report;
  interpolation: Interpolation;
  readFile?: (relativePath: string) => string | undefined;
  composeDir: string;
  volumes: Set<string>;
  networks: Set<string>;
}

const HOST = 'a stack never gets the host';

/** Keys the service's own rule table refuses or ignores, said on the report; true when it may go on. */
function checkKeys(name: string, raw: Record<string, unknown>, report: Report): void {
  for (const key of Object.keys(raw)) {
    if (key.startsWith('x-')) {
      if (key !== 'x-svc') report.warn(name, key, 'an extension key svc does not read');
      continue;
    }
    const rule = SERVICE_KEYS[key];
    if (!rule) report.refuse(name, key, 'is not a key svc knows');
    else if ('refuse' in rule) report.refuse(name, key, rule.refuse);
    else if ('ignore' in rule) report.warn(name, key, `ignored: ${rule.ignore}`);
  }
  if (raw.privileged === true || raw.privileged === 'true') report.refuse(name, 'privileged', `a privileged container has every device and capability of the host: ${HOST}`);
  if (raw.network_mode !== undefined && !['bridge', 'default'].includes(String(raw.network_mode))) {
    const mode = String(raw.network_mode);
    report.refuse(name, 'network_mode', mode === 'none' ? 'svc runs every service on the stack network' : `network_mode ${mode} shares another network namespace: ${HOST}; services reach each other by name on the stack network`);
  }
  if (raw.pid !== undefined && raw.pid !== null) report.refuse(name, 'pid', `pid ${String(raw.pid)} shares another process namespace: ${HOST}`);
  if (raw.ipc !== undefined && !['private', 'shareable', 'none'].includes(String(raw.ipc))) report.refuse(name, 'ipc', `ipc ${String(raw.ipc)} shares another IPC namespace: ${HOST}`);
  if (Array.isArray(raw.links)) {
    raw.links.forEach((link, i) => {
      const [target, alias] = String(link).split(':');
      if (alias !== undefined && alias !== target) report.refuse(name, `links[${i}]`, `the alias ${alias} would be a second name for ${target}: svc gives each service one name on the stack network, its Compose name`);
    });
  }
  if (Array.isArray(raw.security_opt)) {
    raw.security_opt.forEach((opt, i) => {
      if (/^no-new-privileges(:true)?$/.test(String(opt))) report.warn(name, `security_opt[${i}]`, 'ignored: no-new-privileges is not applied by svc yet');
      else report.refuse(name, `security_opt[${i}]`, `"${String(opt)}" loosens the container's confinement: ${HOST}`);
    });
  }
}

function words(value: unknown, name: string, key: string, report: Report): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map(String);
  try {
    return shellWords(String(value));
  } catch (e) {
    if (!(e instanceof ShellWordsError)) throw e;
    report.refuse(name, key, e.message);
    return undefined;
  }
}

function build(value: unknown, name: string, ctx: ServiceContext): StackBuild | undefined {
  if (value === undefined) return undefined;
  const b = isObject(value) ? value : { context: value };
  const { report } = ctx;
  const refused: Record<string, string> = {
    dockerfile_inline: 'svc builds from a Dockerfile of the repository',
    ssh: `forwards the host's SSH agent or keys: ${HOST}`,
    secrets: 'build secrets from the host are not given to builds',
    additional_contexts: 'svc builds from one context inside the repository',
    entitlements: `grants the build host privileges: ${HOST}`,
  };
  for (const key of Object.keys(b)) {
    if (['context', 'dockerfile', 'args', 'target'].includes(key) || key.startsWith('x-')) continue;
    if (key in refused) report.refuse(name, `build.${key}`, refused[key]);
    else if (key === 'privileged' && (b.privileged === true || b.privileged === 'true')) report.refuse(name, 'build.privileged', `a privileged build has the host: ${HOST}`);
    else if (key === 'network' && ['host'].includes(String(b.network))) report.refuse(name, 'build.network', `a build on the host network has the host: ${HOST}`);
    else if (key !== 'privileged') report.warn(name, `build.${key}`, 'ignored: svc builds with its own settings');
  }
  const rawContext = String(b.context ?? '.');
  if (/^[a-z]+:\/\/|^git@|^github\.com\//i.test(rawContext)) {
    report.refuse(name, 'build.context', 'a remote build context is not supported: point the stack at the repository instead');
    return undefined;
  }
  const context = insideStack(ctx.composeDir, rawContext);
  if (!context) {
    report.refuse(name, 'build.context', `"${rawContext}" is outside the stack's directory: ${HOST}`);
    return undefined;
  }
  const out: StackBuild = { context, args: {} };
  if (b.dockerfile !== undefined) {
    const dockerfile = String(b.dockerfile);
    if (!insideStack(context, dockerfile)) report.refuse(name, 'build.dockerfile', `"${dockerfile}" is outside the stack's directory: ${HOST}`);
    else out.dockerfile = dockerfile;
  }
  for (const [k, v] of Object.entries(listOrDict(b.args))) {
    const value = v ?? ctx.interpolation.variables[k];
    if (value !== undefined) out.args[k] = value;
  }
  out.args = sortedRecord(out.args);
  if (b.target !== undefined) out.target = String(b.target);
  return out;
}

function envFiles(value: unknown, name: string, key: string, ctx: ServiceContext): Record<string, string> {
  const entries = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const out: Record<string, string> = {};
  entries.forEach((e, i) => {
    const at = Array.isArray(value) ? `${key}[${i}]` : key;
    const path = String(isObject(e) ? e.path : e);
    const required = isObject(e) ? e.required !== false && e.required !== 'false' : true;
    const rel = insideStack(ctx.composeDir, path);
    if (!rel) return ctx.report.refuse(name, at, `"${path}" is outside the stack's directory: ${HOST}`);
    // readFile takes paths relative to the Compose file's directory; `rel` is the same file from the repository's root.
    const text = ctx.readFile?.(posix.normalize(path));
    if (text === undefined) {
      if (required) ctx.report.refuse(name, at, `${rel} does not exist in the stack's directory`);
      return;
    }
    try {
      Object.assign(out, parseDotenv(text, ctx.interpolation));
    } catch (err) {
      if (!(err instanceof DotenvError)) throw err;
      ctx.report.refuse(name, at, `${rel}: ${err.message}`);
    }
  });
  return out;
}

function healthcheck(value: unknown, name: string, report: Report): StackHealthcheck | undefined {
  if (!isObject(value)) return undefined;
  if (value.disable === true || value.disable === 'true') return { kind: 'disabled' };
  const t = value.test;
  let test: string[] | undefined;
  if (typeof t === 'string') test = ['CMD-SHELL', t];
  else if (Array.isArray(t) && t.length > 0) test = t.map(String);
  if (!test) {
    report.warn(name, 'healthcheck', 'no test: the image\'s own HEALTHCHECK applies and these timings are ignored');
    return undefined;
  }
  if (test[0] === 'NONE') return { kind: 'disabled' };
  if (test[0] !== 'CMD' && test[0] !== 'CMD-SHELL') {
    report.refuse(name, 'healthcheck.test', 'a list test starts with CMD, CMD-SHELL or NONE');
    return undefined;
  }
  const time = (key: string, fallback: number) => {
    if (value[key] === undefined) return fallback;
    const ms = durationMs(value[key]);
    if (ms === undefined) report.refuse(name, `healthcheck.${key}`, `"${String(value[key])}" is not a duration such as 10s or 1m30s`);
    return ms ?? fallback;
  };
  if (value.start_interval !== undefined) report.warn(name, 'healthcheck.start_interval', 'ignored: svc checks at the interval');
  const retries = value.retries === undefined ? 3 : Number(value.retries);
  if (!Number.isInteger(retries) || retries < 0) report.refuse(name, 'healthcheck.retries', 'must be a whole number');
  return { kind: 'command', test, intervalMs: time('interval', 30_000), timeoutMs: time('timeout', 30_000), retries: Number.isInteger(retries) ? retries : 3, startPeriodMs: time('start_period', 0) };
}

function restartPolicy(raw: Record<string, unknown>, name: string, report: Report): StackService['restart'] {
  const deployPolicy = isObject(raw.deploy) && isObject(raw.deploy.restart_policy) ? raw.deploy.restart_policy : undefined;
  if (raw.restart === undefined && deployPolicy) {
    const c = String(deployPolicy.condition ?? 'any');
    for (const k of Object.keys(deployPolicy)) if (k !== 'condition') report.warn(name, `deploy.restart_policy.${k}`, 'ignored: svc restarts with its own backoff');
    return c === 'none' ? 'no' : c === 'on-failure' ? 'on-failure' : 'always';
  }
  if (raw.restart === undefined) return 'no';
  const r = String(raw.restart);
  const m = /^on-failure(?::(\d+))?$/.exec(r);
  if (m) {
    if (m[1]) report.warn(name, 'restart', `ignored: the retry count ${m[1]}; svc restarts with its own backoff`);
    return 'on-failure';
  }
  if (r === 'no' || r === 'always' || r === 'unless-stopped') return r;
  report.refuse(name, 'restart', `"${r}" is not one of no, always, on-failure[:N], unless-stopped`);
  return 'no';
}

function deploy(raw: Record<string, unknown>, name: string, report: Report): { replicas: number; limits: StackService['limits'] } {
  const d = isObject(raw.deploy) ? raw.deploy : {};
  const limits: StackService['limits'] = {};
  for (const key of Object.keys(d)) {
    if (['replicas', 'resources', 'restart_policy', 'mode'].includes(key) || key.startsWith('x-')) continue;
    report.warn(name, `deploy.${key}`, 'ignored: svc deploys each service its own way (blue/green or stop-first)');
  }
  if (d.mode !== undefined && d.mode !== 'replicated') report.warn(name, 'deploy.mode', `ignored: ${String(d.mode)}; svc runs deploy.replicas copies on one host`);
  let replicas = 1;
  const wanted = d.replicas ?? raw.scale;
  if (wanted !== undefined) {
    replicas = Number(wanted);
    if (!Number.isInteger(replicas) || replicas < 0 || replicas > 50) {
      report.refuse(name, d.replicas !== undefined ? 'deploy.replicas' : 'scale', 'must be a whole number from 0 to 50');
      replicas = 1;
    }
  }
  const resources = isObject(d.resources) ? d.resources : {};
  const l = isObject(resources.limits) ? resources.limits : {};
  for (const key of Object.keys(resources)) if (key !== 'limits') report.warn(name, `deploy.resources.${key}`, 'ignored: svc applies limits only');
  if (isObject(resources.reservations) && resources.reservations.devices !== undefined) report.refuse(name, 'deploy.resources.reservations.devices', `maps host devices: ${HOST}`);
  for (const key of Object.keys(l)) if (key !== 'cpus' && key !== 'memory') report.warn(name, `deploy.resources.limits.${key}`, 'ignored: svc limits cpus and memory');
  const cpuValue = l.cpus ?? raw.cpus;
  if (cpuValue !== undefined) {
    const n = cpus(cpuValue);
    if (n === undefined) report.refuse(name, l.cpus !== undefined ? 'deploy.resources.limits.cpus' : 'cpus', `"${String(cpuValue)}" is not a number of CPUs`);
    else limits.cpus = n;
  }
  const memValue = l.memory ?? raw.mem_limit;
  if (memValue !== undefined) {
    const n = bytes(memValue);
    if (n === undefined) report.refuse(name, l.memory !== undefined ? 'deploy.resources.limits.memory' : 'mem_limit', `"${String(memValue)}" is not a size such as 512m or 1g`);
    else if (n < 6 * 1024 * 1024) report.refuse(name, l.memory !== undefined ? 'deploy.resources.limits.memory' : 'mem_limit', 'is under the engine\'s minimum of 6 MiB');
    else limits.memoryBytes = n;
  }
  return { replicas, limits };
}

function networks(raw: Record<string, unknown>, name: string, ctx: ServiceContext): string[] {
  if (raw.networks === undefined) return ['default'];
  const entries = Array.isArray(raw.networks) ? raw.networks.map((n) => [String(n), undefined] as const) : Object.entries(isObject(raw.networks) ? raw.networks : {});
  const out: string[] = [];
  for (const [net, options] of entries) {
    if (!ctx.networks.has(net)) {
      ctx.report.refuse(name, `networks.${net}`, `the network "${net}" is not declared in the top-level networks`);
      continue;
    }
    if (isObject(options))
      for (const k of Object.keys(options)) {
        // An alias is a name other services connect to: dropping it would break them at run time.
        if (k === 'aliases' && Array.isArray(options.aliases) && options.aliases.some((a) => String(a) !== name))
          ctx.report.refuse(name, `networks.${net}.aliases`, 'svc gives a service one name on the stack network, its Compose name; use that name');
        else if (k !== 'aliases') ctx.report.warn(name, `networks.${net}.${k}`, 'ignored: services reach each other by their Compose names');
      }
    out.push(net);
  }
  return [...new Set(out)].sort();
}

function dependsOn(value: unknown): { service: string; condition: DependsOnCondition; required: boolean }[] {
  if (Array.isArray(value)) return value.map((s) => ({ service: String(s), condition: 'service_started' as const, required: true }));
  if (!isObject(value)) return [];
  return Object.entries(value).map(([service, v]) => {
    const o = isObject(v) ? v : {};
    return { service, condition: (o.condition as DependsOnCondition | undefined) ?? 'service_started', required: o.required !== false && o.required !== 'false' };
  });
}

export interface LoadedService {
  service: StackService;
  /** depends_on as written, before the targets are checked against the other services. */
  dependsOn: { service: string; condition: DependsOnCondition; required: boolean }[];
  anonymousVolumes: string[];
}

export function loadService(name: string, raw: Record<string, unknown>, ctx: ServiceContext): LoadedService {
  const { report } = ctx;
  checkKeys(name, raw, report);
  const image = raw.image === undefined ? undefined : String(raw.image);
  if (image !== undefined && !isImageRef(image)) report.refuse(name, 'image', `"${image}" is not an image reference the engine accepts`);
  const b = build(raw.build, name, ctx);
  if (image === undefined && raw.build === undefined) report.refuse(name, 'image', 'a service needs an image or a build');

  const environment: Record<string, string> = envFiles(raw.env_file, name, 'env_file', ctx);
  for (const [k, v] of Object.entries(listOrDict(raw.environment))) {
    const value = v ?? ctx.interpolation.variables[k];
    if (value !== undefined) environment[k] = value;
    else delete environment[k];
  }
  for (const k of Object.keys(environment)) if (!/^[^=\0]+$/.test(k)) report.refuse(name, `environment.${k}`, 'is not a variable name');

  const labels: Record<string, string> = envFiles(raw.label_file, name, 'label_file', ctx);
  for (const [k, v] of Object.entries(listOrDict(raw.labels))) labels[k] = v ?? '';
  for (const k of Object.keys(labels)) if (k.startsWith('svc.')) report.refuse(name, `labels.${k}`, 'the svc. label prefix is svc\'s own (it marks what svc manages)');

  const ports = routePorts(Array.isArray(raw.ports) ? raw.ports : [], name, report);
  const expose = new Set([...parseExpose(Array.isArray(raw.expose) ? raw.expose : [], name, report), ...ports.expose]);

  const parsedX = xSvcSchema.safeParse(raw['x-svc'] ?? {});
  let svc: StackService['svc'] = { links: [], jobs: [] };
  let route: StackService['route'] = ports.route ? { kind: 'port', ...ports.route } : undefined;
  if (!parsedX.success) {
    for (const issue of parsedX.error.issues) {
      // An unknown key is named as the key itself (x-svc.replica), with the ones svc knows.
      const at = (path: PropertyKey[]) => path.reduce<string>((key, p) => (typeof p === 'number' ? `${key}[${p}]` : `${key}.${String(p)}`), 'x-svc');
      if (issue.code === 'unrecognized_keys') for (const k of issue.keys) report.refuse(name, at([...issue.path, k]), issue.path.length === 0 ? `is not an x-svc setting (svc knows ${X_SVC_KEYS.join(', ')})` : 'is not a key of this x-svc setting');
      else report.refuse(name, at(issue.path), issue.message);
    }
  } else {
    try {
      svc = svcSettings(parsedX.data);
    } catch (e) {
      if (!(e instanceof ShellWordsError)) throw e;
      report.refuse(name, 'x-svc.jobs', e.message);
    }
    const x = parsedX.data;
    if (x.domain !== undefined) {
      const port = x.port ?? (expose.size === 1 ? [...expose][0] : undefined);
      if (port === undefined) report.refuse(name, 'x-svc.port', 'a domain needs the port to route to (x-svc.port), unless the service exposes exactly one');
      else {
        if (route) report.warn(name, 'ports', `the published port ${route.publishedPort} is not routed: x-svc.domain routes ${x.domain} instead`);
        route = { kind: 'domain', domain: x.domain, port };
        expose.add(port);
      }
    } else if (x.port !== undefined) report.refuse(name, 'x-svc.port', 'is the port x-svc.domain routes to; without a domain, publish the port in ports');
  }

  const vols = serviceVolumes(Array.isArray(raw.volumes) ? raw.volumes : [], name, ctx.volumes, ctx.composeDir, report);
  const tmpfs = [...(raw.tmpfs === undefined ? [] : Array.isArray(raw.tmpfs) ? raw.tmpfs.map(String) : [String(raw.tmpfs)])].map((t) => t.split(':')[0]);
  tmpfs.forEach((t, i) => {
    if (!t.startsWith('/')) report.refuse(name, Array.isArray(raw.tmpfs) ? `tmpfs[${i}]` : 'tmpfs', `the target "${t}" must be an absolute path in the container`);
  });
  const hc = healthcheck(raw.healthcheck, name, report);
  const { replicas, limits } = deploy(raw, name, report);

  const service: StackService = {
    name,
    environment: sortedRecord(environment),
    expose: [...expose].sort((a, c) => a - c),
    volumes: vols.mounts,
    tmpfs: [...new Set([...tmpfs, ...vols.tmpfs])].sort(),
    dependsOn: [],
    restart: restartPolicy(raw, name, report),
    replicas,
    limits,
    labels: sortedRecord(labels),
    init: raw.init === true || raw.init === 'true',
    networks: networks(raw, name, ctx),
    svc,
  };
  if (image !== undefined) service.image = image;
  if (b) service.build = b;
  const command = words(raw.command, name, 'command', report);
  if (command) service.command = command;
  const entrypoint = words(raw.entrypoint, name, 'entrypoint', report);
  if (entrypoint) service.entrypoint = entrypoint;
  if (route) service.route = route;
  if (hc) service.healthcheck = hc;
  if (raw.working_dir !== undefined) service.workingDir = String(raw.working_dir);
  if (raw.user !== undefined) service.user = String(raw.user);
  if (raw.stop_grace_period !== undefined) {
    const ms = durationMs(raw.stop_grace_period);
    if (ms === undefined) report.refuse(name, 'stop_grace_period', `"${String(raw.stop_grace_period)}" is not a duration such as 10s or 1m30s`);
    else service.stopGracePeriodMs = ms;
  }
  return { service, dependsOn: dependsOn(raw.depends_on), anonymousVolumes: vols.anonymous };
}
