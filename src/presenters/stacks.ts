// The JSON shapes of stacks (docs/api.md "Stacks"): a stack with its services (each one of svc's apps,
// with that app's status), a stack deploy with its steps, a stack event, a plan.
import type { AppView } from '../store/app-view.js';
import type { StackDeployRow, StackEventRow, StackRow, StackVarRow } from '../store/schema/index.js';
import type { StackPlan } from '../desired/stacks.js';
import { parseServiceSpec } from '../stacks/service-spec.js';
import type { Sealer } from '../crypto.js';
import { z } from 'zod';
import { APP_STATUSES, DEPLOY_STRATEGIES, ORIGINS, OWNERS, STACK_DEPLOY_STATUSES, STACK_DEPLOY_TRIGGERS } from '../store/schema/index.js';

const text = z.string().nullable();
const id = z.number().int();

export const stackServiceJsonSchema = z
  .object({
    service: z.string().describe('its name in the Compose file'),
    app_id: id,
    app: z.string().describe("svc's app that runs it"),
    image: text,
    status: z.enum(APP_STATUSES),
    serving: z.boolean(),
    status_reason: text,
    container: text,
    replicas: z.number().int(),
    route: z
      .union([z.object({ domain: z.string(), port: z.number().int() }), z.object({ published_port: z.number().int(), port: z.number().int() })])
      .nullable(),
    strategy: z.enum(DEPLOY_STRATEGIES),
  })
  .meta({ id: 'StackService' });

export const stackVarJsonSchema = z
  .object({ key: z.string(), value: text.describe("null for a secret: GET .../variables/{key}/reveal"), is_secret: z.boolean(), required: z.boolean(), updated_at: z.string() })
  .meta({ id: 'StackVariable' });

export const stackDeployJsonSchema = z
  .object({
    id,
    stack_id: id,
    trigger: z.enum(STACK_DEPLOY_TRIGGERS),
    origin: z.enum(ORIGINS),
    status: z.enum(STACK_DEPLOY_STATUSES),
    phase: z.enum(['forward', 'rollback']),
    error: text,
    config_version: z.number().int(),
    steps: z.array(
      z.object({
        service: z.string(),
        app_id: id,
        action: z.enum(['create', 'change']),
        changes: z.array(z.string()),
        stop_first: z.boolean(),
        deploy_id: id.nullable(),
        previous_deploy_id: id.nullable(),
        status: z.enum(['pending', 'running', 'done', 'failed', 'rolling_back', 'rolled_back', 'kept']),
      }),
    ),
    created_at: z.string(),
    started_at: text,
    completed_at: text,
  })
  .meta({ id: 'StackDeploy' });

export const stackJsonSchema = z
  .object({
    id,
    name: z.string(),
    compose: text,
    repo_url: text,
    branch: z.string(),
    compose_path: z.string(),
    config_version: z.number().int(),
    owner: z.enum(OWNERS),
    services: z.array(stackServiceJsonSchema),
    variables: z.array(stackVarJsonSchema),
    last_deploy: stackDeployJsonSchema.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Stack' });

export const stackEventJsonSchema = z
  .object({ id, stack_deploy_id: id.nullable(), service: text, timestamp: z.string(), level: z.enum(['info', 'warn', 'error']), message: z.string() })
  .meta({ id: 'StackEvent' });

const problem = z.object({ service: z.string().optional(), key: z.string().describe('the Compose key, dotted'), message: z.string() });
export const stackPlanJsonSchema = z
  .object({
    ok: z.boolean(),
    services: z.array(
      z.object({
        service: z.string(),
        app: text,
        action: z.enum(['create', 'change', 'unchanged', 'remove', 'refused']),
        changes: z.array(z.string()),
        stop_first: z.boolean(),
        problems: z.array(problem),
      }),
    ),
    problems: z.array(problem).describe('problems of the file not tied to one service'),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'StackPlan' });

/** POST and PUT: the stack with the plan and the deploy they started (null: nothing to deploy). */
export const stackChangeJsonSchema = stackJsonSchema.extend({ plan: stackPlanJsonSchema, deploy: stackDeployJsonSchema.nullable() }).meta({ id: 'StackChange' });
/** POST and PUT with ?dry_run=true: the plan, nothing written. */
export const stackDryRunJsonSchema = z.object({ dry_run: z.literal(true), plan: stackPlanJsonSchema }).meta({ id: 'StackDryRun' });

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
