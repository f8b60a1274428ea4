// The deploy record and the deploy and app events as the API shows them (API.md "Deploys"); the env
// snapshot itself never leaves the store.
import type { appEvents, deployEvents } from '../store/schema/index.js';
import type { DeployRow } from '../store/schema/index.js';
import { z } from 'zod';
import { DEPLOY_TRIGGERS, ORIGINS } from '../store/schema/index.js';

const text = z.string().nullable();
const DEPLOY_STATUSES = ['pending', 'running', 'success', 'failed', 'auto_rollback', 'cancelled'] as const;

export const deployJsonSchema = z
  .object({
    id: z.number().int(),
    app_id: z.number().int(),
    image_ref: text,
    commit_sha: text,
    trigger: z.enum(DEPLOY_TRIGGERS),
    origin: z.enum(ORIGINS),
    status: z.enum(DEPLOY_STATUSES),
    step: text,
    error: text,
    started_at: text,
    completed_at: text,
    created_at: z.string(),
    env_diff: z.object({ added: z.array(z.string()), removed: z.array(z.string()), changed: z.array(z.string()) }).nullable(),
    watch_until: text,
  })
  .meta({ id: 'Deploy' });

const LEVELS = ['info', 'warn', 'error'] as const;
export const deployEventJsonSchema = z
  .object({ id: z.number().int(), deploy_id: z.number().int(), timestamp: z.string(), level: z.enum(LEVELS), step: z.string(), message: z.string() })
  .meta({ id: 'DeployEvent' });
export const appEventJsonSchema = z
  .object({ id: z.number().int(), app_id: z.number().int(), timestamp: z.string(), level: z.enum(LEVELS), step: z.string(), message: z.string() })
  .meta({ id: 'AppEvent' });

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
