// The JSON shapes of stacks (docs/api.md "Stacks"): a stack with its services (each one of svc's apps,
// with that app's status), a stack deploy with its steps, a stack event, a plan.
import type { AppView } from '../store/app-view.js';
import type { StackDeployRow, StackEventRow, StackRow, StackVarRow } from '../store/schema/index.js';
import type { StackPlan } from '../desired/stacks.js';
import { parseServiceSpec } from '../stacks/service-spec.js';
import type { Sealer } from '../crypto.js';

export function stackServiceJson(sealer: Sealer, app: AppView) {
  const spec = app.stackService ? parseServiceSpec(sealer.open(app.stackService)) : undefined;
  return {
    service: spec?.service.name ?? app.name,
    app_id: app.id,
    app: app.name,
    image: spec?.service.image ?? app.imageRef,
    status: app.status,
    serving: app.serving,
    status_reason: app.statusReason,
    container: app.liveContainerName,
    replicas: app.replicas,
    route: spec?.service.route ? (spec.service.route.kind === 'domain' ? { domain: spec.service.route.domain, port: spec.service.route.port } : { published_port: spec.service.route.publishedPort, port: spec.service.route.port }) : null,
    strategy: app.deployStrategy,
  };
}

export const stackVarJson = (v: StackVarRow) => ({ key: v.key, value: v.isSecret ? null : v.value, is_secret: v.isSecret, required: v.required, updated_at: v.updatedAt });

export function stackDeployJson(d: StackDeployRow) {
  return {
    id: d.id,
    stack_id: d.stackId,
    trigger: d.trigger,
    origin: d.origin,
    status: d.status,
    phase: d.phase,
    error: d.error,
    config_version: d.configVersion,
    steps: d.steps.map((s) => ({
      service: s.service, app_id: s.appId, action: s.action, changes: s.changes, stop_first: s.stopFirst,
      deploy_id: s.deployId, previous_deploy_id: s.previousDeployId, status: s.status,
    })),
    created_at: d.createdAt,
    started_at: d.startedAt,
    completed_at: d.completedAt,
  };
}

export function stackJson(sealer: Sealer, s: StackRow, services: AppView[], vars: StackVarRow[], lastDeploy: StackDeployRow | undefined) {
  return {
    id: s.id,
    name: s.name,
    compose: s.compose,
    repo_url: s.repoUrl,
    branch: s.branch,
    compose_path: s.composePath,
    config_version: s.configVersion,
    owner: s.owner,
    services: services.map((a) => stackServiceJson(sealer, a)),
    variables: vars.map(stackVarJson),
    last_deploy: lastDeploy ? stackDeployJson(lastDeploy) : null,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export const stackEventJson = (e: StackEventRow) => ({ id: e.id, stack_deploy_id: e.stackDeployId, service: e.service, timestamp: e.timestamp, level: e.level, message: e.message });

export const stackPlanJson = (p: StackPlan) => ({ ok: p.ok, services: p.services, problems: p.problems, warnings: p.warnings });
