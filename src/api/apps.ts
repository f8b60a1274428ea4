// App endpoints (API.md "Apps"). Handlers validate field shapes with zod, then go through the store
// (src/store/apps.ts), which checks whole-record rules and uniqueness and enqueues the reconcilers.
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { badRequest, notFound } from '../errors.js';
import { createApp, deleteApp, getAppWithDeployVersion, updateApp, type AppFields } from '../store/apps.js';
import { appDetailJson, appsListJson } from '../store/app-json.js';
import { appEventJson, listAppEvents } from '../store/deploys.js';
import { ACCESS_MODES, APP_TYPES, BUILD_MODES, PROJECT_TYPES } from '../store/schema/index.js';
import { appJson, publicHostname } from './app-json.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { body, domainSchema, idParam, imageRefSchema, nameSchema, portSchema, replicasSchema, resourcesSchema } from './validate.js';
import { BRANCH_RE, repoUrlProblem } from '../build/repo-url.js';


/** Writable fields, each optional; `null` clears a nullable one. Manifests validate App specs with it too. */
export const appFieldShape = {
  app_type: z.enum(APP_TYPES),
  build_mode: z.enum(BUILD_MODES),
  project_type: z.enum(PROJECT_TYPES),
  source: z.string().min(1).max(2048).nullable(),
  repo_url: z.string().superRefine((v, ctx) => {
    const problem = repoUrlProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }).nullable(),
  branch: z.string().regex(BRANCH_RE, 'must be a git branch name'),
  internal_port: portSchema,
  image_ref: imageRefSchema.nullable(),
  domain: domainSchema.nullable(),
  fallback_port: portSchema.nullable(),
  access_mode: z.enum(ACCESS_MODES),
  health_check_path: z.string().max(1024).regex(/^\/\S*$/, 'must be a path starting with /'),
  /** A workflow file path (`.github/workflows/release.yml`) or a workflow name; null: any workflow. */
  ci_workflow: z.string().min(1).max(255).regex(/^[^\x00-\x1f\x7f]+$/, 'must not contain control characters').nullable(),
  /** Copies of the web process; 0 stops the app without deleting it. */
  replicas: replicasSchema,
  /** Limits of each replica; null (or a null member): unlimited. */
  resources: resourcesSchema.nullable(),
};
const fields = z.object(appFieldShape).partial();
/** The create and update bodies; the web UI's forms are checked by the same schemas. */
export const createSchema = fields.extend({ name: nameSchema }).strict();
export const updateSchema = fields.extend({ name: z.unknown().optional() }).strict();
export type AppApiFields = z.infer<typeof fields>;

/** snake_case API fields to the store's camelCase; absent stays absent (partial update). Shared with manifests. */
export function appFieldsToStore(f: AppApiFields): Partial<AppFields> {
  return {
    appType: f.app_type,
    buildMode: f.build_mode,
    projectType: f.project_type,
    source: f.source,
    repoUrl: f.repo_url,
    branch: f.branch,
    internalPort: f.internal_port,
    imageRef: f.image_ref,
    domain: f.domain,
    fallbackPort: f.fallback_port,
    accessMode: f.access_mode,
    healthCheckPath: f.health_check_path,
    ciWorkflow: f.ci_workflow,
    replicas: f.replicas,
    // `resources` is one value: given, it sets both limits (a member left out is unlimited).
    memoryMb: f.resources === undefined ? undefined : (f.resources?.memory_mb ?? null),
    cpus: f.resources === undefined ? undefined : (f.resources?.cpus ?? null),
  };
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** Ports the host already listens on for svc: an app's listener there could never bind. */
export const reservedPorts = (config: ApiDeps['config']): number[] => [config.port, config.proxy.httpPort, config.proxy.httpsPort, config.proxy.dnsPort];

export function appRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const opts = { reservedPorts: reservedPorts(deps.config) };
  const one = (c: Context, id: number) => {
    const found = getAppWithDeployVersion(db, id);
    if (!found) throw notFound('app');
    return appJson(found.app, found.deployedConfigVersion, publicHostname(c, deps.config));
  };

  // The two hot reads come out of SQLite as finished JSON (store/app-json.ts): no rows to map, no garbage.
  r.get('/apps', (c) => c.body(appsListJson(db, publicHostname(c, deps.config)), 200, JSON_TYPE));

  r.post('/apps', async (c) => {
    const input = await body(c, createSchema);
    const row = createApp(db, deps.enqueue, { name: input.name, ...appFieldsToStore(input) }, 'rest', opts);
    deps.log.info('app created', { app: row.name });
    return c.json(one(c, row.id), 201);
  });

  r.get('/apps/:appID', (c) => {
    const json = appDetailJson(db, idParam(c, 'appID', 'app'), publicHostname(c, deps.config));
    if (!json) throw notFound('app');
    return c.body(json, 200, JSON_TYPE);
  });

  r.put('/apps/:appID', async (c) => {
    const id = idParam(c, 'appID', 'app');
    const input = await body(c, updateSchema);
    if (input.name !== undefined) throw badRequest('name is immutable; create a new app instead', { issues: [{ path: 'name', message: 'immutable' }] });
    updateApp(db, deps.enqueue, id, appFieldsToStore(input), opts);
    return c.json(one(c, id));
  });

  r.delete('/apps/:appID', (c) => {
    deleteApp(db, deps.enqueue, idParam(c, 'appID', 'app'));
    return c.body(null, 204);
  });

  r.get('/apps/:appID/events', (c) => {
    const id = idParam(c, 'appID', 'app');
    one(c, id);
    return c.json(listAppEvents(db, id).map(appEventJson));
  });

  return r;
}
