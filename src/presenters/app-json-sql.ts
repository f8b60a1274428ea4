// The two hottest reads of the API, `GET /api/apps` and `GET /api/apps/{id}`, rendered to JSON by SQLite
// itself (json_object / json_group_array) and handed over as one UTF-8 buffer. Going through drizzle, a
// list of 1,000 apps cost ~20,000 mapped values, ~1,000 objects and a 500 KB string per request; that
// garbage (young space is 1 MB under npm start's flags) was most of the list's time and of the daemon's
// heap growth under reads. The shape must stay exactly appJson (presenters/app-json.ts) and deployJson
// (presenters/deploy-json.ts): test/unit/presenters/app-json.test.ts compares them field by field.
import type { Db } from '../store/db.js';

/**
 * appJson as SQL over `a` (apps), `s` (its app_status) and `d` (its live deploy); `:host` is the port-mode
 * URL host. The CASEs are store/app-view.ts's shown* functions.
 */
const APP_OBJECT = `json_object(
  'id', a.id, 'name', a.name,
  'app_type', CASE WHEN a.app_type = 'adopted_container' AND s.live_deploy_id IS NOT NULL THEN 'managed' ELSE a.app_type END,
  'build_mode', a.build_mode, 'project_type', a.project_type,
  'source', a.source, 'repo_url', a.repo_url, 'branch', a.branch,
  'internal_port', CASE WHEN s.port IS NOT NULL AND s.port_basis IS a.internal_port THEN s.port ELSE a.internal_port END,
  'image_ref', CASE WHEN s.live_image IS NOT NULL AND a.image_ref IS s.image_basis THEN s.live_image ELSE a.image_ref END,
  'domain', a.domain, 'fallback_port', a.fallback_port, 'access_mode', a.access_mode,
  'health_check_path', a.health_check_path, 'ci_workflow', a.ci_workflow,
  'code_host', a.code_host,
  'repo_token_set', json(CASE WHEN a.repo_token_sealed IS NOT NULL THEN 'true' ELSE 'false' END),
  'replicas', a.replicas,
  'resources', CASE WHEN a.memory_mb IS NULL AND a.cpus IS NULL THEN NULL
      ELSE json_object('memory_mb', a.memory_mb, 'cpus', a.cpus) END,
  'volumes', json(a.volumes), 'deploy_strategy', a.deploy_strategy,
  'drain_seconds', a.drain_seconds, 'jobs', json(a.jobs),
  'previews', json(a.previews),
  'status', COALESCE(s.status, 'inactive'),
  'status_reason', s.status_reason,
  'serving', json(CASE WHEN s.serving THEN 'true' ELSE 'false' END),
  'live_image', s.live_image, 'route_error', s.route_error, 'certificate_error', s.cert_error,
  'access_url', CASE WHEN a.access_mode = 'domain'
      THEN CASE WHEN a.domain <> '' THEN 'https://' || a.domain END
      ELSE CASE WHEN a.fallback_port <> 0 THEN 'http://' || :host || ':' || a.fallback_port END END,
  'live_container_name', s.live_container_name, 'current_deploy_id', s.live_deploy_id,
  'config_changed', json(CASE WHEN s.live_deploy_id IS NOT NULL AND d.config_version IS NOT NULL
      AND d.config_version <> a.config_version THEN 'true' ELSE 'false' END),
  'created_at', a.created_at, 'updated_at', a.updated_at)`;

/** deployJson as SQL over `x` (deploys). */
const DEPLOY_OBJECT = `json_object(
  'id', x.id, 'app_id', x.app_id, 'image_ref', x.image_ref, 'commit_sha', x.commit_sha, 'trigger', x.trigger, 'origin', x.origin,
  'status', x.status, 'step', x.step, 'error', x.error, 'started_at', x.started_at, 'completed_at', x.completed_at,
  'created_at', x.created_at, 'env_diff', json(x.env_diff), 'watch_until', x.watch_until,
  'drain_until', x.drain_until)`;

const FROM_APPS = 'FROM apps a LEFT JOIN app_status s ON s.app_id = a.id LEFT JOIN deploys d ON d.id = s.live_deploy_id';

// An aggregate's own ORDER BY (SQLite 3.44+) fixes the order; over no rows json_group_array gives [].
const LIST_SQL = `SELECT CAST(json_group_array(${APP_OBJECT} ORDER BY a.id DESC) AS BLOB) ${FROM_APPS}`;

const DETAIL_SQL = `SELECT CAST(json_insert(${APP_OBJECT}, '$.deploys',
    (SELECT json_group_array(${DEPLOY_OBJECT} ORDER BY x.id DESC) FROM deploys x WHERE x.app_id = a.id)) AS BLOB)
  ${FROM_APPS} WHERE a.id = :id`;

/** UTF-8 JSON text; better-sqlite3 returns a BLOB as a Buffer over its own (never shared) ArrayBuffer. */
export type JsonBytes = Uint8Array<ArrayBuffer>;

/** Every app, newest first, as the JSON array `GET /api/apps` answers. */
export function appsListJson(db: Db, host: string): JsonBytes {
  return db.$client.prepare(LIST_SQL).pluck().get({ host }) as JsonBytes;
}

/** One app with its full deploy history (newest first), as `GET /api/apps/{id}` answers; undefined if none. */
export function appDetailJson(db: Db, id: number, host: string): JsonBytes | undefined {
  return db.$client.prepare(DETAIL_SQL).pluck().get({ id, host }) as JsonBytes | undefined;
}
