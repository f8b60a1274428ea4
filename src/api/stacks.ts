// Stack endpoints (docs/api.md "Stacks", issue 32): adapters over the stacks command (src/desired/stacks.ts).
// `?dry_run=true` on create and update answers the plan and writes nothing; a file that cannot run is a 400
// naming the service and the key. A service's logs are its app's log stream.
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { createStackFromTemplate, templateDeploySchema } from '../desired/stack-templates.js';
import { createStack, deleteStack, deployStack, revealStackVar, rollbackStack, updateStack, type StackResult } from '../desired/stacks.js';
import { envKeySchema } from '../desired/fields.js';
import { getApp } from '../store/apps.js';
import { getStack, getStackDeploy, listStackDeploys, listStacks, listStackEvents, listStackVars, stackApps } from '../store/stacks.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { stackChangeJsonSchema, stackDeployJson, stackDeployJsonSchema, stackDryRunJsonSchema, stackEventJson, stackEventJsonSchema, stackJson, stackJsonSchema, stackPlanJson } from '../presenters/stacks.js';
import type { AppView } from '../store/app-view.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { appLogStream } from './logs.js';
import { serviceAppName } from '../stacks/service-spec.js';
import { operations } from './openapi/operation.js';

const op = operations('Stacks');
const dryRunQ = { dry_run: 'true: answer the plan per service and write nothing' };
const refused = { 400: 'invalid_compose: the Compose file cannot run (the service and the key named)', 503: 'this svc has no Compose loader' } as const;

const yes = (v: string | undefined) => ['true', '1', 'yes'].includes(v ?? '');

export function stackRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const stackOf = (c: Context) => {
    const row = getStack(db, idParam(c, 'stackID', 'stack'));
    if (!row) throw notFound('stack');
    return row;
  };
  const views = (stackId: number) => stackApps(db, stackId).map((a) => getApp(db, a.id)).filter((a): a is AppView => a !== undefined);
  const full = (id: number) => {
    const s = getStack(db, id)!;
    return stackJson(deps.sealer, s, views(id), listStackVars(db, id), listStackDeploys(db, id)[0]);
  };
  const answer = (c: Context, result: StackResult, dryRun: boolean, status: 200 | 201 | 202) =>
    dryRun
      ? c.json({ dry_run: true, plan: stackPlanJson(result.plan) })
      : c.json({ ...full(result.stack.id), plan: stackPlanJson(result.plan), deploy: result.deploy ? stackDeployJson(result.deploy) : null }, status);

  r.get('/stacks', op({ summary: 'List stacks (Compose applications)', response: z.array(stackJsonSchema) }), (c) => c.json(listStacks(db).map((s) => full(s.id))));

  r.post('/stacks', op({ summary: 'Create a stack from a Compose file', query: dryRunQ, status: 201, response: stackChangeJsonSchema, more: { 200: { description: 'dry_run: the plan, nothing written', response: stackDryRunJsonSchema } }, errors: { ...refused, 409: 'conflict: the name is taken' } }), async (c) => {
    const dryRun = yes(c.req.query('dry_run'));
    const result = createStack(deps, await jsonBody(c), restOrigin(c), { dryRun, changedBy: c.var.user?.username ?? null });
    return answer(c, result, dryRun, 201);
  });

  r.post('/templates/:name/stacks', op({ summary: 'Create a stack from a template: its inputs checked, its generated values made', body: templateDeploySchema, query: dryRunQ, status: 201, response: stackChangeJsonSchema, more: { 200: { description: 'dry_run: the plan, nothing written', response: stackDryRunJsonSchema } }, errors: { ...refused, 409: 'conflict: the name is taken' } }), async (c) => {
    const dryRun = yes(c.req.query('dry_run'));
    const result = createStackFromTemplate(deps, c.req.param('name'), await jsonBody(c), restOrigin(c), { dryRun, changedBy: c.var.user?.username ?? null });
    return answer(c, result, dryRun, 201);
  });

  r.get('/stacks/:stackID', op({ summary: 'One stack with its services', response: stackJsonSchema }), (c) => c.json(full(stackOf(c).id)));

  r.put('/stacks/:stackID', op({ summary: "Change a stack's Compose file or variables", query: dryRunQ, response: z.union([stackChangeJsonSchema, stackDryRunJsonSchema]), errors: refused }), async (c) => {
    const dryRun = yes(c.req.query('dry_run'));
    const result = updateStack(deps, stackOf(c).id, await jsonBody(c), restOrigin(c), { dryRun, changedBy: c.var.user?.username ?? null });
    return answer(c, result, dryRun, 200);
  });

  r.delete('/stacks/:stackID', op({ summary: 'Delete a stack: its containers, networks and routes', query: { purge: 'true: its named volumes too' }, status: 204 }), (c) => {
    deleteStack(deps, stackOf(c).id, restOrigin(c), { purge: yes(c.req.query('purge')) });
    return c.body(null, 204);
  });

  r.post('/stacks/:stackID/deploys', op({ summary: 'Deploy the stack: each changed service in depends_on order', status: 202, response: stackDeployJsonSchema, errors: { 409: 'a deploy of this stack is running', 422: 'not_supported' } }), async (c) => {
    const result = deployStack(deps, stackOf(c).id, await jsonBody(c), restOrigin(c));
    return c.json(stackDeployJson(result.deploy!), 202);
  });

  r.post('/stacks/:stackID/deploys/rollback', op({ summary: "Deploy the stack's previous file again", status: 202, response: stackDeployJsonSchema, errors: { 409: 'nothing to roll back to, or a deploy is running' } }), (c) => {
    const result = rollbackStack(deps, stackOf(c).id, restOrigin(c));
    return c.json(stackDeployJson(result.deploy!), 202);
  });

  r.get('/stacks/:stackID/deploys', op({ summary: "The stack's deploys, newest first", response: z.array(stackDeployJsonSchema) }), (c) => c.json(listStackDeploys(db, stackOf(c).id).map(stackDeployJson)));

  r.get('/stacks/:stackID/deploys/:deployID', op({ summary: 'One stack deploy', response: stackDeployJsonSchema }), (c) => {
    const stack = stackOf(c);
    const d = getStackDeploy(db, idParam(c, 'deployID', 'stack deploy'));
    if (!d || d.stackId !== stack.id) throw notFound('stack deploy');
    return c.json(stackDeployJson(d));
  });

  r.get('/stacks/:stackID/events', op({ summary: "The stack's events", query: { after: 'only events with a larger id' }, response: z.array(stackEventJsonSchema) }), (c) => {
    const after = z.coerce.number().int().min(0).catch(0).parse(c.req.query('after') ?? 0);
    return c.json(listStackEvents(db, stackOf(c).id, after).map(stackEventJson));
  });

  r.get('/stacks/:stackID/variables/:key/reveal', op({ summary: "A stack variable's value (audited)", response: z.object({ key: z.string(), value: z.string() }) }), (c) => {
    const key = envKeySchema.safeParse(c.req.param('key'));
    if (!key.success) throw notFound('stack variable');
    const revealed = revealStackVar(deps, stackOf(c).id, key.data);
    deps.log.info('stack variable revealed', { stack_id: c.req.param('stackID'), variable: revealed.key, by: c.var.user?.username });
    c.header('cache-control', 'no-store');
    return c.json(revealed);
  });

  r.get('/stacks/:stackID/services/:service/logs/stream', op({ summary: "A stack service's live log lines as Server-Sent Events", query: { tail: 'lines of history first (0-10000, default 100)' }, media: { type: 'text/event-stream', description: 'as the app log stream' }, errors: { 503: 'engine_unavailable' } }), (c) => {
    const stack = stackOf(c);
    const app = serviceAppName(stack.name, c.req.param('service') ?? '');
    const row = app ? stackApps(db, stack.id).find((a) => a.name === app) : undefined;
    if (!row) throw notFound('stack service');
    return appLogStream(deps, c, row.id);
  });

  return r;
}
