// The deploy record as the API shows it (API.md "Deploys"); the env snapshot itself never leaves the store.
import type { DeployRow } from '../store/schema/index.js';

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
  };
}
