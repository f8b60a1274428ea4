/** @jsxImportSource hono/jsx */
// The app fields form, shared by /apps/new ("Create app") and the app page's settings ("Save changes"),
// and its translation into the JSON shape the API's own zod schemas check (src/api/apps.ts).
import { ACCESS_MODES, APP_TYPES, BUILD_MODES, CODE_HOSTS, DEPLOY_STRATEGIES, PROJECT_TYPES, type AppRow } from '../store/schema/index.js';
import { parseVolumes } from '../desired/workload-fields.js';
import { DEFAULT_PREVIEW_SETTINGS, PREVIEW_SERVICES, settingsOf } from '../previews/settings.js';
import { checked, defined, int, text, type Form } from './context.js';
import { Check, Field, Select } from './layout.js';
import type { Child } from 'hono/jsx';

const opts = (values: readonly string[]) => values.map((v) => [v, v] as const);

/** What each choice means, in the option's text (the value sent stays the API's). */
const MEANING: Record<string, string> = {
  external_ci: 'external_ci: your CI builds and pushes the image; svc deploys it',
  svc_build: 'svc_build: svc clones the repository and builds the image',
  managed: 'managed: svc runs the app from its image',
  adopted_container: 'adopted_container: take over a running container (Source: its name)',
  external_service: 'external_service: only route to an upstream URL (Source)',
  port: 'port: served on a port of this host',
  domain: 'domain: served on a domain over HTTPS',
};
const explained = (values: readonly string[]) => values.map((v) => [v, MEANING[v] ?? v] as const);

/** Values to show: the row being edited, or what the user typed before an error. */
export type AppFormValues = Partial<Record<keyof typeof FIELD_NAMES, string | number | null>>;

const FIELD_NAMES = {
  name: 1, image_ref: 1, internal_port: 1, access_mode: 1, domain: 1, fallback_port: 1, build_mode: 1,
  repo_url: 1, branch: 1, health_check_path: 1, app_type: 1, source: 1, project_type: 1,
  replicas: 1, memory_mb: 1, cpus: 1, volumes: 1, deploy_strategy: 1, drain_seconds: 1, code_host: 1,
  /** Shown as set / not set only: the token itself never goes back to a page. */
  repo_token_set: 1,
  previews_form: 1, previews_enabled: 1, previews_max: 1, previews_ttl_days: 1, previews_services: 1, previews_forks: 1,
  previews_memory_mb: 1, previews_cpus: 1, previews_env: 1,
};

/** The previews settings (issue 20) as form values; `env` as `KEY=value` lines. */
function previewValues(stored: string | null): AppFormValues {
  const p = settingsOf(stored);
  return {
    previews_form: '1', previews_enabled: p.enabled ? 'on' : null, previews_max: p.max, previews_ttl_days: p.ttl_days, previews_services: p.services,
    previews_forks: p.forks ? 'on' : null, previews_memory_mb: p.resources.memory_mb, previews_cpus: p.resources.cpus,
    previews_env: Object.entries(p.env).map(([k, v]) => `${k}=${v}`).join('\n'),
  };
}

export const valuesOfRow = (a: AppRow): AppFormValues => ({
  image_ref: a.imageRef, internal_port: a.internalPort, access_mode: a.accessMode, domain: a.domain,
  fallback_port: a.fallbackPort, build_mode: a.buildMode, repo_url: a.repoUrl, branch: a.branch,
  health_check_path: a.healthCheckPath, app_type: a.appType, source: a.source, project_type: a.projectType,
  replicas: a.replicas, memory_mb: a.memoryMb, cpus: a.cpus,
  volumes: parseVolumes(a.volumes).map((v) => `${v.name}:${v.mount_path}`).join(', '), deploy_strategy: a.deployStrategy,
  drain_seconds: a.drainSeconds,
  code_host: a.codeHost ?? '', repo_token_set: a.repoTokenSealed ? 'set' : null,
  ...previewValues(a.previews),
});

export const AppFields = ({ v, create }: { v: AppFormValues; create: boolean }) => (
  <>
    {create && <Field label="Name" name="name" value={v.name} required hint="lowercase letters, digits and -" autocomplete="off" />}
    <Field label={create ? 'Image' : 'Default image'} name="image_ref" value={v.image_ref} placeholder="registry/name:tag" autocomplete="off" />
    <div class="row">
      <Field label="Internal port" name="internal_port" value={v.internal_port ?? 3000} inputmode="numeric" />
      <Select label="Access mode" name="access_mode" value={String(v.access_mode ?? 'port')} options={explained(ACCESS_MODES)} />
    </div>
    <div class="row">
      <Field label="Domain" name="domain" value={v.domain} hint="domain mode" placeholder="app.example.com" />
      <Field label="Port" name="fallback_port" value={v.fallback_port} hint="port mode: the host port" inputmode="numeric" />
    </div>
    <div class="row">
      <Select label="Build mode" name="build_mode" value={String(v.build_mode ?? 'external_ci')} options={explained(BUILD_MODES)} />
      <Select label="Project type" name="project_type" value={String(v.project_type ?? 'auto')} options={opts(PROJECT_TYPES)} />
    </div>
    <div class="row">
      <Field label="Repository" name="repo_url" value={v.repo_url} placeholder="https://github.com/owner/repo" />
      <Field label="Branch" name="branch" value={v.branch ?? 'main'} />
    </div>
    <MoreOptions create={create}>
    <div class="row">
      <Select label="Code host" name="code_host" value={String(v.code_host ?? '')} options={[['', 'from the repository URL'], ...opts(CODE_HOSTS)]} />
      {/* Write-only: never filled in; blank keeps the stored token. */}
      <Field label="Access token" name="repo_token" type="password" autocomplete="new-password"
        hint={v.repo_token_set ? 'set; blank keeps it' : 'not set; for a private repository over HTTPS'} />
      {!create && v.repo_token_set && <Check label="Remove the access token" name="repo_token_remove" />}
    </div>
    <Field label="Health check path" name="health_check_path" value={v.health_check_path ?? '/'} />
    <div class="row">
      <Field label="Replicas" name="replicas" value={v.replicas ?? 1} hint="0 stops the app" inputmode="numeric" />
      <Field label="Memory (MiB)" name="memory_mb" value={v.memory_mb} hint="per replica; blank: unlimited" inputmode="numeric" />
      <Field label="CPUs" name="cpus" value={v.cpus} hint="per replica, e.g. 0.5; blank: unlimited" inputmode="text" />
    </div>
    <div class="row">
      <Field label="Volumes" name="volumes" value={v.volumes} hint="name:/mount/path, comma-separated; kept across deploys" placeholder="data:/var/lib/app" autocomplete="off" />
      <Select label="Deploy strategy" name="deploy_strategy" value={String(v.deploy_strategy ?? 'blue_green')} options={opts(DEPLOY_STRATEGIES)} />
      <Field label="Drain (seconds)" name="drain_seconds" value={v.drain_seconds ?? 30} hint="how long an old version keeps its WebSockets and streams after a deploy (0-3600)" inputmode="numeric" />
    </div>
    <div class="row">
      <Select label="App type" name="app_type" value={String(v.app_type ?? 'managed')} options={explained(APP_TYPES)} />
      <Field label="Source" name="source" value={v.source} hint="container name or upstream URL for adopted and external apps" />
    </div>
    <PreviewFields v={v} />
    </MoreOptions>
  </>
);

/**
 * The new-app form asks for what a first app needs (name, image or repository, port, access) and keeps the
 * rest under "More options" (a native <details>: no script needed); the settings form shows everything.
 */
const MoreOptions = ({ create, children }: { create: boolean; children?: Child }) =>
  create ? (
    <details class="more">
      <summary>More options</summary>
      <div class="stack">{children}</div>
    </details>
  ) : (
    <>{children}</>
  );

/** Pull-request previews (issue 20): `svc_build` apps get `<app>-pr-<n>` for each pull request to their branch. */
const PreviewFields = ({ v }: { v: AppFormValues }) => {
  const d = DEFAULT_PREVIEW_SETTINGS;
  return (
    <fieldset>
      <legend>Pull-request previews</legend>
      <input type="hidden" name="previews_form" value="1" />
      <div class="row">
        <Check label="Previews of pull requests" name="previews_enabled" checked={v.previews_enabled === 'on'} />
        <Check label="Previews of forks (without secrets)" name="previews_forks" checked={v.previews_forks === 'on'} />
      </div>
      <div class="row">
        <Field label="Most previews" name="previews_max" value={v.previews_max ?? d.max} hint="the oldest goes when a new one needs the room" inputmode="numeric" />
        <Field label="Days without a commit" name="previews_ttl_days" value={v.previews_ttl_days ?? d.ttl_days} hint="then the preview is removed" inputmode="numeric" />
        <Select label="Preview services" name="previews_services" value={String(v.previews_services ?? d.services)} options={PREVIEW_SERVICES.map((s) => [s, s === 'fresh' ? 'fresh: an empty instance of each linked service' : s === 'copy' ? "copy: an instance of each linked service with a copy of its data" : 'none: no services'] as const)} />
      </div>
      <div class="row">
        <Field label="Preview memory (MiB)" name="previews_memory_mb" value={v.previews_memory_mb ?? d.resources.memory_mb} inputmode="numeric" />
        <Field label="Preview CPUs" name="previews_cpus" value={v.previews_cpus ?? d.resources.cpus} inputmode="text" />
      </div>
      <div class="field">
        <label for="f-previews-env">Preview variables</label>
        <span class="hint" id="f-previews-env-hint">KEY=value, one per line: set on every preview, over the app's own</span>
        <textarea id="f-previews-env" name="previews_env" aria-describedby="f-previews-env-hint" rows={3}>{v.previews_env ?? ''}</textarea>
      </div>
    </fieldset>
  );
};

/** What the user typed, to show again after an error. */
export const valuesOfForm = (f: Form): AppFormValues => Object.fromEntries(Object.keys(FIELD_NAMES).map((k) => [k, f[k] ?? null]));

/**
 * The API body for a create (blank fields absent: the API's defaults apply) or an update (blank nullable
 * fields are null: the form clears them).
 */
export function appBody(f: Form, mode: 'create' | 'update'): Record<string, unknown> {
  const clear = (k: string) => (mode === 'update' ? (text(f, k) ?? null) : text(f, k));
  const port = (k: string) => (mode === 'update' ? (int(f, k) ?? null) : int(f, k));
  return defined({
    name: mode === 'create' ? (f.name ?? '') : undefined,
    image_ref: clear('image_ref'),
    internal_port: int(f, 'internal_port'),
    access_mode: text(f, 'access_mode'),
    domain: clear('domain'),
    fallback_port: port('fallback_port'),
    build_mode: text(f, 'build_mode'),
    project_type: text(f, 'project_type'),
    repo_url: clear('repo_url'),
    branch: text(f, 'branch'),
    health_check_path: text(f, 'health_check_path'),
    app_type: text(f, 'app_type'),
    source: clear('source'),
    replicas: int(f, 'replicas'),
    resources: resources(f, mode),
    volumes: volumes(f, mode),
    deploy_strategy: text(f, 'deploy_strategy'),
    drain_seconds: int(f, 'drain_seconds'),
    // A form without the field (another page) changes nothing; blank: derived from the URL.
    code_host: f.code_host === undefined ? undefined : (text(f, 'code_host') ?? (mode === 'update' ? null : undefined)),
    repo_token: f.repo_token_remove === 'on' ? null : text(f, 'repo_token'),
    previews: previews(f, mode),
  });
}

/**
 * The previews fieldset as the API's `previews` value. Off with every other field at its default: absent
 * on create, null on update (the app has no settings); otherwise the whole object, so turning previews off
 * keeps what was set. A form without the fieldset changes nothing.
 */
function previews(f: Form, mode: 'create' | 'update'): Record<string, unknown> | null | undefined {
  if (f.previews_form === undefined) return undefined;
  const num = (k: string) => {
    const raw = text(f, k);
    if (raw === undefined) return undefined;
    return /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : raw; // not a number: the schema names the field
  };
  const env: Record<string, string> = {};
  for (const line of (f.previews_env ?? '').split(/\r?\n/)) {
    if (!line.trim()) continue;
    const i = line.indexOf('=');
    env[(i < 0 ? line : line.slice(0, i)).trim()] = i < 0 ? '' : line.slice(i + 1);
  }
  const body = defined({
    enabled: checked(f, 'previews_enabled'),
    forks: checked(f, 'previews_forks'),
    max: num('previews_max'),
    ttl_days: num('previews_ttl_days'),
    services: text(f, 'previews_services'),
    env,
    resources: defined({ memory_mb: num('previews_memory_mb'), cpus: num('previews_cpus') }),
  });
  const d = DEFAULT_PREVIEW_SETTINGS;
  const isDefault =
    !body.enabled && !body.forks && (body.max ?? d.max) === d.max && (body.ttl_days ?? d.ttl_days) === d.ttl_days && (body.services ?? d.services) === d.services &&
    Object.keys(env).length === 0 && (num('previews_memory_mb') ?? d.resources.memory_mb) === d.resources.memory_mb && (num('previews_cpus') ?? d.resources.cpus) === d.resources.cpus;
  if (isDefault) return mode === 'update' ? null : undefined;
  return body;
}

/** `name:/path, name2:/path2` as the API's list; a blank field clears the list on update. */
function volumes(f: Form, mode: 'create' | 'update'): { name: string; mount_path: string }[] | undefined {
  if (f.volumes === undefined) return undefined; // a form without the field changes nothing
  const raw = text(f, 'volumes');
  if (raw === undefined) return mode === 'update' ? [] : undefined;
  return raw.split(',').map((s) => s.trim()).filter(Boolean).map((item) => {
    const i = item.indexOf(':');
    return i < 0 ? { name: item, mount_path: '' } : { name: item.slice(0, i).trim(), mount_path: item.slice(i + 1).trim() };
  });
}

/** The two limit fields as the API's one `resources` value: both blank is unlimited (null on update). */
function resources(f: Form, mode: 'create' | 'update'): Record<string, unknown> | null | undefined {
  const memory = int(f, 'memory_mb');
  const cpus = text(f, 'cpus');
  if (memory === undefined && cpus === undefined) return mode === 'update' ? null : undefined;
  // Not a number: passed on as text, so the schema names the field in its error.
  const cpuValue = cpus === undefined ? null : /^[0-9]+(\.[0-9]+)?$/.test(cpus) ? Number(cpus) : cpus;
  return { memory_mb: memory ?? null, cpus: cpuValue };
}
