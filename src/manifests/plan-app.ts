// The pure diff of one App document against the app as it is: which fields, variables and links change,
// and whether the manifest's image must be rolled out. No I/O; plan.ts calls it per document.
//
// Rules (API.md "Manifests", docs/api.md): fields absent from `spec` take the API's defaults, except
// `image_ref`, which deploys write (CI webhooks, builds) and which is left alone unless the document names
// it. `env` and `services` absent: not managed by the manifest; present: the complete list (keys and links
// not listed are removed). An env entry without `value` keeps the stored value; without `is_secret` /
// `required` keeps the stored flag (a new key: false), exactly as POST .../env treats them.
import { APP_DEFAULTS, appFieldsToStore, type AppFields } from '../desired/apps.js';
import type { AppSpec } from './schema.js';
import type { CurrentApp, CurrentEnv } from './state.js';

export type EnvOp = { op: 'set'; key: string; value: string; isSecret: boolean; required: boolean } | { op: 'delete'; key: string };
export type LinkOp = { op: 'link'; service: string; alias: string | null } | { op: 'unlink'; service: string };

export interface AppDiff {
  /** Every writable field as the manifest wants it (create) or only the changed ones (update). */
  fields: Partial<AppFields>;
  env: EnvOp[];
  links: LinkOp[];
  /** snake_case names: `image_ref`, `env.KEY`, `services.NAME`. */
  changes: string[];
  /** The image to roll out, when the manifest's image is not the live one and may be tried. */
  deployImage: string | null;
  /** Why a wanted deploy does not start (missing required variables, an image that already failed). */
  note?: string;
  /** `repo_token` to write (null: remove); undefined: the manifest does not name it, or it is unchanged. */
  repoToken?: string | null;
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Desired fields: API defaults under the spec; `image_ref` only when named. */
export function desiredFields(spec: AppSpec, current: AppFields | undefined): AppFields {
  const { env: _env, services: _services, repo_token: _token, ...fieldSpec } = spec;
  const given = Object.fromEntries(Object.entries(appFieldsToStore(fieldSpec)).filter(([, v]) => v !== undefined));
  return { ...APP_DEFAULTS, imageRef: current?.imageRef ?? null, ...given } as AppFields;
}

function diffEnv(spec: AppSpec['env'], current: CurrentEnv[]): { ops: EnvOp[]; final: CurrentEnv[] } {
  if (spec === undefined) return { ops: [], final: current };
  const byKey = new Map(current.map((e) => [e.key, e]));
  const ops: EnvOp[] = [];
  const final: CurrentEnv[] = [];
  for (const entry of spec) {
    const c = byKey.get(entry.key);
    const want = {
      key: entry.key,
      value: entry.value ?? c?.value ?? '',
      isSecret: entry.is_secret ?? c?.isSecret ?? false,
      required: entry.required ?? c?.required ?? false,
    };
    final.push(want);
    if (!c || c.value !== want.value || c.isSecret !== want.isSecret || c.required !== want.required) ops.push({ op: 'set', ...want });
  }
  const listed = new Set(spec.map((e) => e.key));
  for (const c of current) if (!listed.has(c.key)) ops.push({ op: 'delete', key: c.key });
  return { ops, final };
}

function diffLinks(spec: AppSpec['services'], current: CurrentApp['links']): LinkOp[] {
  if (spec === undefined) return [];
  const ops: LinkOp[] = [];
  const byService = new Map(current.map((l) => [l.service, l]));
  for (const entry of spec) {
    const alias = entry.alias ?? null;
    const c = byService.get(entry.name);
    if (c && c.alias === alias) continue;
    if (c) ops.push({ op: 'unlink', service: entry.name });
    ops.push({ op: 'link', service: entry.name, alias });
  }
  const listed = new Set(spec.map((l) => l.name));
  for (const c of current) if (!listed.has(c.service)) ops.push({ op: 'unlink', service: c.service });
  // Unlinks first: a new link may take over the variable names of one that goes (pg1 -> pg2, no alias).
  return [...ops.filter((o) => o.op === 'unlink'), ...ops.filter((o) => o.op === 'link')];
}

/** Diffs one App document against the current app (undefined: it will be created). */
export function diffApp(spec: AppSpec, current: CurrentApp | undefined): AppDiff {
  const want = desiredFields(spec, current?.fields);
  const changedKeys = (Object.keys(want) as (keyof AppFields)[]).filter((k) => !current || current.fields[k] !== want[k]);
  const env = diffEnv(spec.env, current?.env ?? []);
  const links = diffLinks(spec.services, current?.links ?? []);
  const fields: Partial<AppFields> = current ? Object.fromEntries(changedKeys.map((k) => [k, want[k]])) : want;
  const changes = current ? changedKeys.map(snake) : [];
  const image = spec.image_ref ?? null;
  let deployImage: string | null = null;
  let note: string | undefined;
  if (image && want.appType !== 'external_service' && current?.liveImage !== image && !current?.openImages.includes(image)) {
    const failedBefore = current?.failedImages.includes(image) ?? false;
    const missing = env.final.filter((e) => e.required && e.value === '').map((e) => e.key);
    if (failedBefore) {
      note = `image ${image} failed to deploy before; change image_ref to try again`;
      // A flip-back or failed rollout put the old image back: that is not drift to undo in a loop.
      const i = changes.indexOf('image_ref');
      if (i >= 0) {
        changes.splice(i, 1);
        delete fields.imageRef;
      }
    } else if (missing.length > 0) note = `the deploy of ${image} waits for required environment variables: ${missing.join(', ')}`;
    // The image is deployed, but `image_ref` is a change only when the field differs (a deploy that waited
    // for a variable, or one that was never live, is not an image change: `deploy` on the resource says it).
    else deployImage = image;
  }
  for (const op of env.ops) changes.push(`env.${op.key}`);
  for (const op of links) if (!changes.includes(`services.${op.service}`)) changes.push(`services.${op.service}`);
  // `repo_token` absent: not managed by the manifest (it may stay out of git, set through the API).
  const token = spec.repo_token;
  const repoToken = token !== undefined && token !== (current?.repoToken ?? null) ? token : undefined;
  if (repoToken !== undefined && current) changes.push('repo_token');
  return { fields, env: env.ops, links, changes, deployImage, note, ...(repoToken !== undefined ? { repoToken } : {}) };
}
