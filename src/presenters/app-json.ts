// The app record as the API and the UI show it (API.md "Apps"), with the two derived fields: `access_url` (where a
// browser reaches the app) and `config_changed` (env or links changed since the live deploy).
import { parseJobs, parseVolumes } from '../desired/workload-fields.js';
import { settingsOf, settingsToStore, type PreviewSettings } from '../previews/settings.js';
import type { AppRow } from '../store/schema/index.js';
import { shownAppType, shownImageRef, shownInternalPort, type AppView } from '../store/app-view.js';
import { z } from 'zod';
import { jobSchema, volumeSchema } from '../desired/workload-fields.js';
import { previewSettingsSchema } from '../previews/settings.js';
import { ACCESS_MODES, APP_STATUSES, APP_TYPES, BUILD_MODES, CODE_HOSTS, DEPLOY_STRATEGIES, PROJECT_TYPES } from '../store/schema/index.js';
import { deployJsonSchema } from './deploy-json.js';

const text = z.string().nullable();
const id = z.number().int();

/** The schema of appJson (and of presenters/app-json-sql.ts's SQL rendering), published in the OpenAPI document. */
export const appJsonSchema = z
  .object({
    id,
    name: z.string(),
    app_type: z.enum(APP_TYPES),
    build_mode: z.enum(BUILD_MODES),
    project_type: z.enum(PROJECT_TYPES),
    source: text,
    repo_url: text,
    branch: z.string(),
    internal_port: z.number().int(),
    image_ref: text,
    domain: text,
    fallback_port: z.number().int().nullable(),
    access_mode: z.enum(ACCESS_MODES),
    health_check_path: z.string(),
    ci_workflow: text,
    code_host: z.enum(CODE_HOSTS).nullable(),
    repo_token_set: z.boolean(),
    replicas: z.number().int(),
    resources: z.object({ memory_mb: z.number().int().nullable(), cpus: z.number().nullable() }).nullable().describe('null: no limit'),
    volumes: z.array(volumeSchema),
    deploy_strategy: z.enum(DEPLOY_STRATEGIES),
    drain_seconds: z.number().int().describe('How long the old release keeps its open connections after a switch'),
    jobs: z.array(jobSchema),
    previews: previewSettingsSchema.nullable().describe('null: previews off'),
    status: z.enum(APP_STATUSES),
    status_reason: text,
    serving: z.boolean(),
    live_image: text,
    route_error: text,
    certificate_error: text,
    access_url: text.describe('Where a browser reaches the app'),
    live_container_name: text,
    current_deploy_id: id.nullable(),
    config_changed: z.boolean().describe('Variables or links changed since the live deploy'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'App' });

/** GET /api/apps/{id}: the app with its deploy history, newest first. */
export const appDetailJsonSchema = appJsonSchema.extend({ deploys: z.array(deployJsonSchema) }).meta({ id: 'AppDetail' });

/** Domain mode: `https://<domain>` (the proxy serves it with TLS, ACME or internal CA); port mode: `http://<host>:<port>`. */
export function accessUrl(app: Pick<AppRow, 'accessMode' | 'domain' | 'fallbackPort'>, hostname: string): string | null {
  if (app.accessMode === 'domain') return app.domain ? `https://${app.domain}` : null;
  return app.fallbackPort ? `http://${hostname}:${app.fallbackPort}` : null;
}

/** `deployedConfigVersion`: the config version of the app's live deploy, null when it has none. */
export function appJson(app: AppView, deployedConfigVersion: number | null, hostname: string) {
  return {
    id: app.id,
    name: app.name,
    app_type: shownAppType(app),
    build_mode: app.buildMode,
    project_type: app.projectType,
    source: app.source,
    repo_url: app.repoUrl,
    branch: app.branch,
    internal_port: shownInternalPort(app),
    image_ref: shownImageRef(app),
    domain: app.domain,
    fallback_port: app.fallbackPort,
    access_mode: app.accessMode,
    health_check_path: app.healthCheckPath,
    ci_workflow: app.ciWorkflow,
    code_host: app.codeHost,
    repo_token_set: app.repoTokenSealed !== null,
    replicas: app.replicas,
    resources: resourcesJson(app),
    volumes: parseVolumes(app.volumes),
    deploy_strategy: app.deployStrategy,
    drain_seconds: app.drainSeconds,
    jobs: parseJobs(app.jobs),
    previews: app.previews === null ? null : (JSON.parse(settingsToStore(settingsOf(app.previews))!) as PreviewSettings),
    status: app.status,
    status_reason: app.statusReason,
    serving: app.serving,
    live_image: app.liveImage,
    route_error: app.routeError,
    certificate_error: app.certError,
    access_url: accessUrl(app, hostname),
    live_container_name: app.liveContainerName,
    current_deploy_id: app.currentDeployId,
    config_changed: app.currentDeployId !== null && deployedConfigVersion !== null && deployedConfigVersion !== app.configVersion,
    created_at: app.createdAt,
    updated_at: app.updatedAt,
  };
}

/** The limits as the API shows them: null when neither is set (unlimited). */
export function resourcesJson(app: Pick<AppRow, 'memoryMb' | 'cpus'>): { memory_mb: number | null; cpus: number | null } | null {
  return app.memoryMb === null && app.cpus === null ? null : { memory_mb: app.memoryMb, cpus: app.cpus };
}
