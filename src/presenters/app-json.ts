// The app record as the API and the UI show it (API.md "Apps"), with the two derived fields: `access_url` (where a
// browser reaches the app) and `config_changed` (env or links changed since the live deploy).
import { parseJobs, parseVolumes } from '../desired/workload-fields.js';
import { settingsOf, settingsToStore, type PreviewSettings } from '../previews/settings.js';
import type { AppRow } from '../store/schema/index.js';
import { shownAppType, shownImageRef, shownInternalPort, type AppView } from '../store/app-view.js';

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
