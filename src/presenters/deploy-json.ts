// The deploy record and the deploy and app events as the API shows them (API.md "Deploys"); the env
// snapshot itself never leaves the store.
import type { appEvents, deployEvents } from '../store/schema/index.js';
import type { DeployRow } from '../store/schema/index.js';

/** A deploy record (presenters/app-json-sql.ts renders the same shape in SQL: keep them equal). */
export function deployJson(d: DeployRow) {
  return {
    id: d.id,
    app_id: d.appId,
    image_ref: d.imageRef,
    commit_sha: d.commitSha,
    trigger: d.trigger,
    origin: d.origin,
    status: d.status,
    step: d.step,
    error: d.error,
    started_at: d.startedAt,
    completed_at: d.completedAt,
    created_at: d.createdAt,
    env_diff: d.envDiff ?? null,
    watch_until: d.watchUntil,
    /** While the version this deploy replaced still drains (issue 37): when it is stopped at the latest; else null. */
    drain_until: d.drainUntil,
  };
}

/** One step of a deploy's event log (GET /api/deploys/{id}/events and its stream). */
export function deployEventJson(e: typeof deployEvents.$inferSelect) {
  return { id: e.id, deploy_id: e.deployId, timestamp: e.timestamp, level: e.level, step: e.step, message: e.message };
}

/** One event of an app that is not a deploy's (self-heal, drift, jobs). */
export function appEventJson(e: typeof appEvents.$inferSelect) {
  return { id: e.id, app_id: e.appId, timestamp: e.timestamp, level: e.level, step: e.step, message: e.message };
}
