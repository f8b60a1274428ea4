// The one apply path of every manifest source (directory, git, POST /api/manifests/apply): parse, read
// the current state, plan (pure), then perform the plan in ONE transaction through the same commands the
// REST handlers and the UI call (src/desired/: apps, env, links, services, deploys), so validation,
// uniqueness, config_changed and the queue keys are exactly the API's. A failure anywhere rolls the whole
// source back; a dry run stops after the plan.
import { createAppRecord, deleteApp, reservedPorts, updateAppRecord } from '../desired/apps.js';
import type { CommandCtx } from '../desired/context.js';
import { requestDeploy } from '../desired/deploys.js';
import { deleteEnv, setEnv } from '../desired/env.js';
import { createLink, deleteLink } from '../desired/links.js';
import { createService, deleteService } from '../desired/services.js';
import { upgradeService } from '../desired/service-upgrades.js';
import { DomainError, notFound } from '../errors.js';
import { getApp } from '../store/apps.js';
import { tx } from '../store/db.js';
import { addAppEvent } from '../store/deploys.js';
import { getServiceByName } from '../store/services.js';
import { parseManifestFile, type ManifestError, type ParsedFile, type SourcedDoc } from './parse.js';
import { planManifests, type ManifestSource, type Plan, type PlannedResource } from './plan.js';
import { contentRevision, getSourceRecord, writeSourceRecord, type RecordedResource } from './record.js';
import { appIdByName, readState, serviceIdByName } from './state.js';
import { recordAudit } from '../store/audit.js';

/** What an apply needs: the commands' context. */
export type ApplyDeps = CommandCtx;

export interface ApplyRequest {
  source: ManifestSource;
  /** Shown by GET /api/manifests: the directory, the repository, or the API. */
  location: string;
  files: { file: string; text: string }[];
  /** The git commit; otherwise the content hash is the revision. */
  revision?: string;
  dryRun?: boolean;
  prune: boolean;
  pruneServices: boolean;
  /** Files the source could not read (each is kept as it was, like a file with invalid YAML). */
  readErrors?: ManifestError[];
  /** Start the guarded upgrade of a service whose declared version is later (`svc apply --allow-upgrade`). */
  allowUpgrade?: boolean;
  /** Parses one file; a source passes a memoized parseManifestFile so unchanged files are not parsed again. */
  parse?: (file: string, text: string) => ParsedFile;
}

/** The answer of an apply (API.md "Manifests"). */
export interface ApplyResult {
  source: ManifestSource;
  revision: string;
  dry_run: boolean;
  resources: PlannedResource[];
  errors: ManifestError[];
}

export function applyManifests(deps: ApplyDeps, req: ApplyRequest): ApplyResult {
  const { db } = deps;
  const docs: SourcedDoc[] = [];
  const errors: ManifestError[] = [...(req.readErrors ?? [])];
  for (const f of req.files) {
    const parsed = (req.parse ?? parseManifestFile)(f.file, f.text);
    docs.push(...parsed.docs);
    errors.push(...parsed.errors);
  }
  const revision = req.revision ?? contentRevision(req.files);
  const previous = getSourceRecord(db, req.source);
  const plan = planManifests({
    source: req.source,
    docs,
    state: readState(db, deps.sealer),
    prune: req.prune,
    pruneServices: req.pruneServices,
    keepFiles: new Set(errors.map((e) => e.file)),
    previous: previous?.resources ?? [],
    // An API request is one unit: with an error in it, what it leaves out says nothing about deletion.
    noPrune: req.source === 'api' && errors.length > 0,
    reservedPorts: reservedPorts(deps.config),
    allowUpgrade: req.allowUpgrade ?? false,
  });
  errors.push(...plan.errors);
  const result: ApplyResult = { source: req.source, revision, dry_run: req.dryRun ?? false, resources: plan.resources, errors };
  if (req.dryRun) return result;

  const changed = plan.resources.some((r) => r.action !== 'unchanged');
  const drift = previous?.revision === revision;
  try {
    const deployIds = tx(db, () => perform(deps, req.source, plan, drift ? 'drift' : 'manifest', revision));
    // The deploys it queued, so a client (`svc apply`) can wait for their outcome.
    result.resources = plan.resources.map((r) => (r.kind === 'App' && deployIds.has(r.name) ? { ...r, deploy_id: deployIds.get(r.name) } : r));
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    errors.push({ file: '', document: -1, path: '', message: `nothing applied: ${err.message}` });
    writeSourceRecord(db, { source: req.source, location: req.location, revision: previous?.revision ?? null, resources: previous?.resources ?? [], errors }, false);
    return { ...result, resources: plan.resources.map((r) => ({ ...r, action: 'unchanged', changes: [] })) };
  }
  if (changed) deps.log.info('manifests applied', { source: req.source, revision, changed: plan.resources.filter((r) => r.action !== 'unchanged').length });
  // A directory or git apply has no request for the HTTP middleware to audit: record each change here
  // (field names only). An API apply is audited by the middleware with its user.
  if (req.source !== 'api') auditManifestChanges(db, req.source, revision, plan.resources, deps.now());
  writeSourceRecord(db, { source: req.source, location: req.location, revision, resources: recorded(plan, previous?.resources ?? [], errors), errors }, changed);
  return result;
}

function auditManifestChanges(db: ApplyDeps['db'], source: ManifestSource, revision: string, resources: PlannedResource[], now: Date) {
  for (const r of resources) {
    if (r.action === 'unchanged') continue;
    recordAudit(db, { user_id: null, username: null, origin: 'manifest', address: null, action: `manifest ${source} ${r.action} ${r.kind}`, target: `${r.name}@${revision.slice(0, 12)}`, fields: r.changes, status: 200 }, now);
  }
}

/** What the source now declares: the applied documents plus what bad files keep from last time. */
function recorded(plan: Plan, previous: RecordedResource[], errors: ManifestError[]): RecordedResource[] {
  const out: RecordedResource[] = plan.applied.map((d) => ({ kind: d.doc.kind, name: d.doc.metadata.name, file: d.file }));
  const bad = new Set(errors.map((e) => e.file));
  for (const r of previous) if (r.file && bad.has(r.file) && !out.some((o) => o.kind === r.kind && o.name === r.name)) out.push(r);
  return out;
}

/** Performs a plan; must run inside a transaction. Throws a DomainError when a command refuses a write. */
function perform(deps: ApplyDeps, source: ManifestSource, plan: Plan, step: 'manifest' | 'drift', revision: string): Map<string, number> {
  const { db } = deps;
  const deployIds = new Map<string, number>();
  const by = `manifest:${source}`;
  for (const name of plan.deleteApps) {
    const id = appIdByName(db, name);
    if (id !== undefined) deleteApp(deps, id, 'manifest');
  }
  for (const s of plan.createServices) createService(deps, { name: s.name, type: s.type, ...(s.version !== undefined ? { version: s.version } : {}) }, 'manifest', source);
  const rev = revision.slice(0, 12);
  for (const a of plan.apps) {
    const { diff } = a;
    if (!a.create && diff.changes.length === 0 && !diff.deployImage && Object.keys(diff.fields).length === 0) continue;
    const token = diff.repoToken === undefined ? {} : { repoToken: diff.repoToken };
    const id = a.create
      ? createAppRecord(deps, { name: a.name, ...diff.fields, ...token }, source, 'manifest').id
      : appIdByName(db, a.name)!;
    if (!a.create && (Object.keys(diff.fields).length > 0 || diff.repoToken !== undefined)) updateAppRecord(deps, id, { ...diff.fields, ...token }, 'manifest');
    for (const op of diff.env) {
      if (op.op === 'set') setEnv(deps, id, { key: op.key, value: op.value, is_secret: op.isSecret, required: op.required }, 'manifest', by);
      else deleteEnv(deps, id, op.key, 'manifest', by);
    }
    for (const op of diff.links) {
      const serviceId = serviceIdByName(db, op.service);
      if (serviceId === undefined) throw notFound(`service ${op.service}`);
      if (op.op === 'unlink') deleteLink(deps, id, serviceId, 'manifest');
      else createLink(deps, id, { service_id: serviceId, alias: op.alias }, 'manifest');
    }
    let deployed = '';
    if (diff.deployImage) {
      // A manifest's rollout is SPEC.md's `manual` trigger; `origin` says it came from a manifest.
      const d = requestDeploy(deps, getApp(db, id)!, { imageRef: diff.deployImage, trigger: 'manual' }, 'manifest');
      deployed = `; deploy ${d.id} of ${diff.deployImage} queued`;
      deployIds.set(a.name, d.id);
    }
    if (a.create) addAppEvent(db, id, 'manifest', `created from the ${source} manifests (revision ${rev})${deployed}`);
    else if (diff.changes.length > 0 || deployed) {
      const what = diff.changes.join(', ') || 'no field changed';
      if (step === 'drift') addAppEvent(db, id, 'drift', `drift corrected: ${what} set back to the ${source} manifests (revision ${rev})${deployed}`, 'warn');
      else addAppEvent(db, id, 'manifest', `updated from the ${source} manifests (revision ${rev}): ${what}${deployed}`);
    }
    if (diff.note && (a.create || diff.changes.length > 0)) addAppEvent(db, id, 'manifest', diff.note, 'warn');
  }
  for (const u of plan.upgradeServices) upgradeService(deps, serviceIdByName(db, u.name)!, { version: u.version }, 'manifest');
  for (const name of plan.deleteServices) {
    const row = getServiceByName(db, name);
    if (row && !row.deletedAt) deleteService(deps, row.id, { purge: false, force: false }, 'manifest');
  }
  return deployIds;
}
