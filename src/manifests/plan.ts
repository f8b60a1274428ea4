// The pure plan of a manifest apply: desired documents + current state -> per-resource actions, document
// errors and the operations apply.ts performs. Files are atomic: a file with any error (here or in
// parse.ts) contributes nothing, and the plan is recomputed without it until no new error appears (a
// file whose app links a service from a dropped file then fails too). Ownership and prune follow API.md:
// never touch a `rest` resource, any manifest source may update another's, only the creator deletes.
import { DomainError } from '../errors.js';
import { envKeys, kindOf, versionsOf } from '../catalog/catalog.js';
import { isLaterVersion } from '../catalog/types.js';
import { checkAppRules } from '../desired/app-rules.js';
import { ENV_VALUE_MAX_BYTES } from '../desired/fields.js';
import type { Owner } from '../store/schema/index.js';
import { diffApp, type AppDiff } from './plan-app.js';
import type { ManifestError, SourcedDoc } from './parse.js';
import type { CurrentState } from './state.js';

export type ManifestSource = Exclude<Owner, 'rest'>;
export type Action = 'create' | 'update' | 'delete' | 'unchanged';

export interface PlannedResource {
  kind: 'App' | 'Service';
  name: string;
  action: Action;
  changes: string[];
  /** The file that declares it (none for deletions). */
  file?: string;
  note?: string;
  /** The image this apply deploys (an App whose image is not live yet), also when `image_ref` did not change. */
  deploy?: string;
  /** Set in an apply's answer (not a dry run): the id of the deploy it queued for this App. */
  deploy_id?: number;
}

export interface PlanInput {
  source: ManifestSource;
  docs: SourcedDoc[];
  state: CurrentState;
  /** Delete this source's apps that no document names (dir and git: always; API: `prune`). */
  prune: boolean;
  /** Delete this source's services too (needs `prune` as well). */
  pruneServices: boolean;
  /** Files that had errors: what this source last applied from them is kept, never pruned. */
  keepFiles: Set<string>;
  /** What this source applied last time, with the file each came from. */
  previous: { kind: string; name: string; file?: string }[];
  /** When nothing may be pruned at all (the whole source could not be read, or an API apply had errors). */
  noPrune?: boolean;
  reservedPorts: number[];
  /** A declared version later than the one a service runs starts its guarded upgrade (`--allow-upgrade`). */
  allowUpgrade?: boolean;
}

export interface AppStep {
  name: string;
  create: boolean;
  diff: AppDiff;
}

export interface Plan {
  resources: PlannedResource[];
  errors: ManifestError[];
  /** Services to create (name, type), apps to write, apps and services to delete. */
  createServices: { name: string; type: string; version?: string }[];
  apps: AppStep[];
  deleteApps: string[];
  deleteServices: string[];
  /** Guarded major upgrades this apply starts (`allowUpgrade`). */
  upgradeServices: { name: string; version: string }[];
  /** The documents that survived (their files had no error): what the source now declares. */
  applied: SourcedDoc[];
}

/** What a version change does, said where a manifest declares one (the plan, the error without the flag). */
export const upgradePlanText = (name: string, from: string, to: string) =>
  `upgrade of service ${name} from ${from} to ${to}: a backup first, a new ${to} container beside the old one, the data moved with writes refused during the move (reads served), verified table by table, then the linked apps redeployed onto ${to}; ${from} is kept stopped for 7 days (svc services upgrade ${name} --revert or --confirm)`;

/** Errors of each document against the state and the other documents; pure. */
function documentErrors(docs: SourcedDoc[], input: PlanInput): ManifestError[] {
  const errors: ManifestError[] = [];
  const err = (d: SourcedDoc, path: string, message: string) => errors.push({ file: d.file, document: d.document, path, message });
  const { state } = input;
  const apps = new Map(state.apps.map((a) => [a.name, a]));
  const services = new Map(state.services.map((s) => [s.name, s]));
  const declaredServices = new Map<string, string>();
  const seen = new Set<string>();
  for (const d of docs) {
    const id = `${d.doc.kind}/${d.doc.metadata.name}`;
    if (seen.has(id)) err(d, 'metadata.name', `${d.doc.kind} ${d.doc.metadata.name} is declared more than once`);
    seen.add(id);
    if (d.doc.kind === 'Service') {
      declaredServices.set(d.doc.metadata.name, d.doc.spec.type);
      const cur = services.get(d.doc.metadata.name);
      if (cur?.owner === 'rest') err(d, 'metadata.name', `service ${cur.name} was created through the API or UI; manifests do not change it`);
      else if (cur?.deleting) err(d, 'metadata.name', `service ${cur.name} is being deleted; apply again shortly`);
      else if (cur && cur.type !== d.doc.spec.type) err(d, 'spec.type', `the type of service ${cur.name} is ${cur.type} and cannot change`);
      else if (cur && !cur.deleting && d.doc.spec.version !== undefined && d.doc.spec.version !== cur.version && d.doc.spec.version !== cur.upgradingTo) {
        const to = d.doc.spec.version;
        if (cur.upgradingTo) err(d, 'spec.version', `service ${cur.name} is being upgraded to ${cur.upgradingTo}; declare ${cur.upgradingTo} or wait for it to end`);
        else if (!versionsOf(cur.type).includes(to)) err(d, 'spec.version', `${cur.type} is offered at versions ${versionsOf(cur.type).join(', ')}`);
        else if (!isLaterVersion(cur.type, cur.version, to)) err(d, 'spec.version', `service ${cur.name} runs version ${cur.version}; ${to} is older, and a downgrade is a restore of a backup`);
        else if (!input.allowUpgrade) err(d, 'spec.version', `${upgradePlanText(cur.name, cur.version, to)}. Apply with --allow-upgrade (allow_upgrade: true) to start it, or run svc services upgrade ${cur.name} ${to}`);
      }
    }
  }
  const pruned = new Set(pruneApps(docs, input));
  const declaredApps = new Set(docs.filter((d) => d.doc.kind === 'App').map((d) => d.doc.metadata.name));
  const taken = new Map<string, string>();
  for (const a of state.apps) {
    if (pruned.has(a.name) || declaredApps.has(a.name)) continue;
    if (a.fields.domain) taken.set(`domain:${a.fields.domain}`, a.name);
    if (a.fields.fallbackPort) taken.set(`port:${a.fields.fallbackPort}`, a.name);
  }
  for (const d of docs) {
    if (d.doc.kind !== 'App') continue;
    const name = d.doc.metadata.name;
    const cur = apps.get(name);
    if (cur?.owner === 'rest') {
      err(d, 'metadata.name', `app ${name} was created through the API or UI; manifests do not change it`);
      continue;
    }
    const diff = diffApp(d.doc.spec, cur);
    const fields = { ...(cur?.fields ?? {}), ...diff.fields } as Parameters<typeof checkAppRules>[0];
    try {
      checkAppRules(fields, input.reservedPorts);
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      for (const i of (e.details?.issues as { path: string; message: string }[]) ?? []) err(d, `spec.${i.path}`, i.message);
    }
    for (const [key, path] of [[fields.domain && `domain:${fields.domain}`, 'spec.domain'], [fields.fallbackPort && `port:${fields.fallbackPort}`, 'spec.fallback_port']] as const) {
      if (!key) continue;
      const holder = taken.get(key);
      if (holder) err(d, path, `${key.split(':')[1]} is already used by app ${holder}`);
      else taken.set(key, name);
    }
    (d.doc.spec.env ?? []).forEach((e, i) => {
      if (e.value !== undefined && Buffer.byteLength(e.value, 'utf8') > ENV_VALUE_MAX_BYTES) err(d, `spec.env.${i}.value`, `larger than ${ENV_VALUE_MAX_BYTES} bytes`);
    });
    const injected = new Map<string, string>();
    (d.doc.spec.services ?? []).forEach((l, i) => {
      const live = services.get(l.name);
      const type = declaredServices.get(l.name) ?? (live && !live.deleting ? live.type : undefined);
      if (!type) return err(d, `spec.services.${i}.name`, `no service named ${l.name}`);
      for (const k of envKeys(kindOf(type as never), l.alias)) {
        const other = injected.get(k);
        if (other) return err(d, `spec.services.${i}.alias`, `variable ${k} would also come from service ${other}; choose an alias`);
        injected.set(k, l.name);
      }
    });
  }
  return errors;
}

/** This source's apps that no document names and that may go (prune rules, kept files). */
function pruneApps(docs: SourcedDoc[], input: PlanInput): string[] {
  if (!input.prune || input.noPrune) return [];
  const named = new Set(docs.filter((d) => d.doc.kind === 'App').map((d) => d.doc.metadata.name));
  const kept = new Set(input.previous.filter((r) => r.kind === 'App' && r.file && input.keepFiles.has(r.file)).map((r) => r.name));
  return input.state.apps.filter((a) => a.owner === input.source && !named.has(a.name) && !kept.has(a.name)).map((a) => a.name);
}

export function planManifests(input: PlanInput): Plan {
  let docs = input.docs;
  const errors: ManifestError[] = [];
  const keepFiles = new Set(input.keepFiles);
  for (;;) {
    const found = documentErrors(docs, { ...input, keepFiles });
    if (found.length === 0) break;
    errors.push(...found);
    const bad = new Set(found.map((e) => e.file));
    for (const f of bad) keepFiles.add(f);
    docs = docs.filter((d) => !bad.has(d.file));
  }
  return { ...buildPlan(docs, { ...input, keepFiles }), errors };
}

function buildPlan(docs: SourcedDoc[], input: PlanInput): Omit<Plan, 'errors'> {
  const { state } = input;
  const resources: PlannedResource[] = [];
  const createServices: Plan['createServices'] = [];
  const upgradeServices: Plan['upgradeServices'] = [];
  const appSteps: AppStep[] = [];
  const liveServices = new Map(state.services.filter((s) => !s.deleting).map((s) => [s.name, s]));
  for (const d of docs) {
    if (d.doc.kind !== 'Service') continue;
    const live = liveServices.get(d.doc.metadata.name);
    if (!live) createServices.push({ name: d.doc.metadata.name, type: d.doc.spec.type, ...(d.doc.spec.version !== undefined ? { version: d.doc.spec.version } : {}) });
    const to = d.doc.spec.version;
    if (live && to !== undefined && to !== live.version && to !== live.upgradingTo) {
      // documentErrors let it through: a later version, allowed.
      upgradeServices.push({ name: live.name, version: to });
      resources.push({ kind: 'Service', name: live.name, action: 'update', changes: ['version'], file: d.file, note: upgradePlanText(live.name, live.version, to) });
      continue;
    }
    const note = live && live.upgradingTo && to === live.upgradingTo ? { note: `the upgrade to ${to} is under way` } : {};
    resources.push({ kind: 'Service', name: d.doc.metadata.name, action: live ? 'unchanged' : 'create', changes: [], file: d.file, ...note });
  }
  const apps = new Map(state.apps.map((a) => [a.name, a]));
  const finalLinks = new Map<string, string[]>();
  for (const a of state.apps) finalLinks.set(a.name, a.links.map((l) => l.service));
  for (const d of docs) {
    if (d.doc.kind !== 'App') continue;
    const cur = apps.get(d.doc.metadata.name);
    const diff = diffApp(d.doc.spec, cur);
    const changed = !cur || diff.changes.length > 0 || diff.deployImage !== null;
    appSteps.push({ name: d.doc.metadata.name, create: !cur, diff });
    if (d.doc.spec.services) finalLinks.set(d.doc.metadata.name, d.doc.spec.services.map((l) => l.name));
    resources.push({
      kind: 'App',
      name: d.doc.metadata.name,
      action: !cur ? 'create' : changed ? 'update' : 'unchanged',
      changes: diff.changes,
      file: d.file,
      ...(diff.note ? { note: diff.note } : {}),
      ...(diff.deployImage ? { deploy: diff.deployImage } : {}),
    });
  }
  const deleteApps = pruneApps(docs, input);
  for (const name of deleteApps) {
    finalLinks.delete(name);
    resources.push({ kind: 'App', name, action: 'delete', changes: [] });
  }
  const deleteServices: string[] = [];
  if (input.prune && input.pruneServices && !input.noPrune) {
    const named = new Set(docs.filter((d) => d.doc.kind === 'Service').map((d) => d.doc.metadata.name));
    const kept = new Set(input.previous.filter((r) => r.kind === 'Service' && r.file && input.keepFiles.has(r.file)).map((r) => r.name));
    for (const s of liveServices.values()) {
      if (s.owner !== input.source || named.has(s.name) || kept.has(s.name)) continue;
      const users = [...finalLinks].filter(([, list]) => list.includes(s.name)).map(([app]) => app);
      if (users.length > 0) {
        resources.push({ kind: 'Service', name: s.name, action: 'unchanged', changes: [], note: `not deleted: still linked to ${users.join(', ')}` });
        continue;
      }
      deleteServices.push(s.name);
      resources.push({ kind: 'Service', name: s.name, action: 'delete', changes: [] });
    }
  }
  return { resources, createServices, upgradeServices, apps: appSteps, deleteApps, deleteServices, applied: docs };
}
