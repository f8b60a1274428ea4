// The previews command (issue 20, API.md "Previews"): a pull request's preview app `<app>-pr-<number>`
// created or moved to a new head commit, and removed. A preview is an ordinary app row (so the app and
// proxy reconcilers run, route and clean it up like any app) plus a `previews` row naming its parent and
// pull request. Removal goes through deleteApp, the one delete path: containers, routes, DNS answers and
// (app reconciler) the images built for it follow.
import { eq } from 'drizzle-orm';
import { keyOf } from '../controller/types.js';
import { BRANCH_RE } from '../build/repo-url.js';
import { conflict, invalid } from '../errors.js';
import { getApp } from '../store/apps.js';
import { shownImageRef, type AppView } from '../store/app-view.js';
import { tx } from '../store/db.js';
import { allPreviews, getPreview, orphanPreviewServices, previewsOf, releasePreviewServices, releaseService } from '../store/previews.js';
import { bumpConfigVersion } from '../store/services.js';
import { apps, envVars, nowIso, previews, type DeployRow, type PreviewRow } from '../store/schema/index.js';
import { evictions, expired, type PullRequest } from '../previews/decide.js';
import { pickPort, previewDomain, previewName } from '../previews/naming.js';
import { settingsOf } from '../previews/settings.js';
import { deleteApp, reservedPorts } from './apps.js';
import type { AppFields } from './app-rules.js';
import type { CommandCtx, Origin } from './context.js';
import { requestDeploy } from './deploys.js';
import { syncPreviewServices } from './preview-services.js';

export interface UpsertResult {
  app: string;
  /** Null for an `external_ci` parent: the deploy comes with the CI run's image (deployPreviewImage). */
  deploy: DeployRow | null;
  /** Previews removed to make room under `max`. */
  evicted: string[];
  /** Fresh services created or released (`previews.services: "fresh"`). */
  services: string[];
}

const lower = (a: number | null, b: number) => (a === null ? b : Math.min(a, b));

/** The fields of the preview app: the parent's build, the head's branch, a smaller footprint, its own address. */
function previewFields(ctx: CommandCtx, parent: AppView, pr: PullRequest, address: Pick<AppFields, 'domain' | 'fallbackPort'>): AppFields {
  const limits = settingsOf(parent.previews).resources;
  return {
    appType: 'managed',
    buildMode: parent.buildMode === 'external_ci' ? 'external_ci' : 'svc_build',
    projectType: parent.projectType,
    source: null,
    repoUrl: parent.repoUrl,
    // Only a name the branch rule accepts is stored (it may reach `git fetch`); the deploy names the commit anyway.
    branch: BRANCH_RE.test(pr.headRef) ? pr.headRef : parent.branch,
    internalPort: parent.internalPort,
    // external_ci: the parent's image name; each deploy names `<image>:<sha>` of the CI run.
    imageRef: parent.buildMode === 'external_ci' ? shownImageRef(parent) : null,
    domain: address.domain,
    fallbackPort: address.fallbackPort,
    accessMode: parent.accessMode,
    healthCheckPath: parent.healthCheckPath,
    ciWorkflow: parent.buildMode === 'external_ci' ? parent.ciWorkflow : null,
    replicas: 1,
    memoryMb: lower(parent.memoryMb, limits.memory_mb),
    cpus: lower(parent.cpus, limits.cpus),
    previews: null,
    // No volumes and no jobs: a preview shares no files with the parent and leaves none behind, and the
    // parent's scheduled work (mails, billing runs) must not run twice from a pull request.
    volumes: '[]',
    deployStrategy: 'blue_green',
    drainSeconds: parent.drainSeconds,
    jobs: '[]',
    codeHost: parent.codeHost,
  };
}

/** A new preview's address: `pr-<n>.<domain>` in domain mode, a free port of SVC_PREVIEW_PORTS in port mode. */
function newAddress(ctx: CommandCtx, parent: AppView, number: number): Pick<AppFields, 'domain' | 'fallbackPort'> {
  if (parent.accessMode === 'domain') {
    const domain = parent.domain ? previewDomain(parent.domain, number) : null;
    if (!domain) throw invalid(`no preview domain can be derived from ${parent.domain ?? '(none)'}`);
    if (ctx.db.select({ id: apps.id }).from(apps).where(eq(apps.domain, domain)).get()) throw conflict(`domain ${domain} is already used by another app`, { field: 'domain' });
    return { domain, fallbackPort: null };
  }
  const range = ctx.config.previewPorts;
  if (!range) throw conflict('port-mode previews need SVC_PREVIEW_PORTS (a port range such as 20000-20999)');
  const taken = new Set<number>(reservedPorts(ctx.config));
  for (const r of ctx.db.select({ port: apps.fallbackPort }).from(apps).all()) if (r.port) taken.add(r.port);
  // A port another process on the host holds is skipped too (Caddy could never bind it).
  for (;;) {
    const port = pickPort(range, taken);
    if (port === null) throw conflict(`no free preview port in ${range.from}-${range.to}`);
    if (!ctx.portInUse?.(port)) return { domain: null, fallbackPort: port };
    taken.add(port);
  }
}

/**
 * The preview's variables: the parent's (its secrets only when the head is in the parent's own
 * repository; sealed values are copied sealed) with the preview `env` on top, as plain values.
 */
function copyEnv(ctx: CommandCtx, parent: AppView, previewId: number, fork: boolean) {
  const { db } = ctx;
  const now = nowIso();
  db.delete(envVars).where(eq(envVars.appId, previewId)).run();
  const overrides = settingsOf(parent.previews).env;
  for (const v of db.select().from(envVars).where(eq(envVars.appId, parent.id)).all()) {
    if ((v.isSecret && fork) || v.key in overrides) continue;
    db.insert(envVars).values({ appId: previewId, key: v.key, value: v.value, secretSealed: v.secretSealed, isSecret: v.isSecret, required: false, updatedAt: now }).run();
  }
  for (const [key, value] of Object.entries(overrides)) {
    db.insert(envVars).values({ appId: previewId, key, value, secretSealed: null, isSecret: false, required: false, updatedAt: now }).run();
  }
  bumpConfigVersion(db, previewId);
}

/** Creates the preview of `pr` for `parent`, or moves it to the pull request's new head, and queues its deploy. */
export function upsertPreview(ctx: CommandCtx, parent: AppView, pr: PullRequest, origin: Origin): UpsertResult {
  const { db } = ctx;
  const name = previewName(parent.name, pr.number);
  if (!name) throw invalid(`the preview name ${parent.name}-pr-${pr.number} would be longer than 63 characters`);
  const evicted: string[] = [];
  const evictedRows: PreviewRow[] = [];
  const touched: string[] = [];
  const settings = settingsOf(parent.previews);
  const result = tx(db, () => {
    const existing = getPreview(db, parent.id, pr.number);
    let appId: number;
    if (existing) {
      const current = getApp(db, existing.appId)!;
      const fields = previewFields(ctx, parent, pr, { domain: current.domain, fallbackPort: current.fallbackPort });
      db.update(apps).set({ ...fields, repoTokenSealed: parent.repoTokenSealed, updatedAt: nowIso() }).where(eq(apps.id, existing.appId)).run();
      db.update(previews)
        .set({ headSha: pr.sha, headRef: pr.headRef, fork: pr.fork, lastCommitAt: ctx.now().toISOString(), host: pr.host, repository: pr.repository })
        .where(eq(previews.id, existing.id))
        .run();
      appId = existing.appId;
    } else {
      for (const victim of evictions(previewsOf(db, parent.id), settings.max)) {
        const v = getApp(db, victim.appId);
        if (!v) continue;
        touched.push(...releasePreviewServices(db, [v.id]));
        db.delete(apps).where(eq(apps.id, v.id)).run();
        evicted.push(v.name);
        evictedRows.push(victim);
      }
      if (db.select({ id: apps.id }).from(apps).where(eq(apps.name, name)).get()) throw conflict(`an app named ${name} already exists and is not a preview`, { field: 'name' });
      const fields = previewFields(ctx, parent, pr, newAddress(ctx, parent, pr.number));
      appId = db.insert(apps).values({ ...fields, repoTokenSealed: parent.repoTokenSealed, name, owner: 'rest' }).returning().get().id;
      db.insert(previews)
        .values({ appId, parentId: parent.id, prNumber: pr.number, headSha: pr.sha, headRef: pr.headRef, fork: pr.fork, lastCommitAt: ctx.now().toISOString(), host: pr.host, repository: pr.repository })
        .run();
    }
    copyEnv(ctx, parent, appId, pr.fork);
    // A fork's code never gets the parent's data (as it never gets its secrets): its copy is a fresh one.
    touched.push(...syncPreviewServices(ctx, parent.id, { id: appId, name }, pr.fork && settings.services === 'copy' ? 'fresh' : settings.services));
    const deploy = parent.buildMode === 'external_ci' ? null : requestDeploy(ctx, getApp(db, appId)!, { commitSha: pr.sha, trigger: 'webhook' }, origin);
    return { app: name, deploy };
  });
  for (const n of [...evicted, name]) ctx.enqueue(keyOf('app', n));
  for (const n of touched) ctx.enqueue(keyOf('service', n));
  evictedRows.forEach((row, i) => announceGone(ctx, row, evicted[i], `the app keeps at most ${settings.max} previews and this one had the oldest commit`));
  ctx.enqueue(keyOf('proxy', 'main'));
  ctx.log.info('preview updated', { app: name, pr: pr.number, commit: pr.sha, evicted, services: touched, origin });
  return { ...result, evicted, services: touched };
}

/** The image a CI run pushed for a preview's head (external_ci): its deploy queued. */
export function deployPreviewImage(ctx: CommandCtx, previewAppId: number, imageRef: string, sha: string, origin: Origin): DeployRow {
  const app = getApp(ctx.db, previewAppId);
  if (!app) throw invalid('the preview is gone');
  return requestDeploy(ctx, app, { imageRef, commitSha: sha, trigger: 'webhook' }, origin);
}

/** Tells the pull-request reporter a preview went (after its rows are gone; it sends once the write is committed). */
function announceGone(ctx: CommandCtx, row: PreviewRow, preview: string, reason: string) {
  const parent = getApp(ctx.db, row.parentId)?.name ?? preview.replace(/-pr-\d+$/, '');
  ctx.bus.emit('previewGone', {
    previewId: row.id, parentId: row.parentId, prNumber: row.prNumber, host: row.host, repository: row.repository,
    commentId: row.commentId, app: parent, preview, sha: row.headSha, reason,
  });
}

/** Removes the preview of pull request `number` of `parentId`; null when it has none. `reason` goes on the pull request. */
export function teardownPreview(ctx: CommandCtx, parentId: number, number: number, origin: Origin, reason = 'the pull request was closed'): string | null {
  const row = getPreview(ctx.db, parentId, number);
  if (!row) return null;
  const name = getApp(ctx.db, row.appId)?.name ?? null;
  deleteApp(ctx, row.appId, origin, { reason });
  return name;
}

/** Removes every preview whose parent turned previews off or whose last commit is older than `ttl_days`. */
export function expirePreviews(ctx: CommandCtx, origin: Origin): string[] {
  const gone: string[] = [];
  for (const p of allPreviews(ctx.db)) {
    const parent = getApp(ctx.db, p.parentId);
    const s = settingsOf(parent?.previews ?? null);
    if (s.enabled && !expired(p.lastCommitAt, s.ttl_days, ctx.now())) continue;
    const name = getApp(ctx.db, p.appId)?.name;
    deleteApp(ctx, p.appId, origin, { reason: s.enabled ? `no new commit for ${s.ttl_days} days` : 'previews were turned off for the app' });
    if (name) gone.push(name);
  }
  // Fresh services whose preview app is gone by a path that missed them: removed with their data.
  for (const s of orphanPreviewServices(ctx.db)) {
    releaseService(ctx.db, s.id);
    ctx.enqueue(keyOf('service', s.name));
    gone.push(s.name);
  }
  return gone;
}
