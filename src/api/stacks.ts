// Stack endpoints (docs/api.md "Stacks", issue 32): adapters over the stacks command (src/desired/stacks.ts).
// `?dry_run=true` on create and update answers the plan and writes nothing; a file that cannot run is a 400
// naming the service and the key. A service's logs are its app's log stream.
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { createStack, deleteStack, deployStack, revealStackVar, rollbackStack, updateStack, type StackResult } from '../desired/stacks.js';
import { envKeySchema } from '../desired/fields.js';
import { getApp } from '../store/apps.js';
import { getStack, getStackDeploy, listStackDeploys, listStacks, listStackEvents, listStackVars, stackApps } from '../store/stacks.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { stackDeployJson, stackEventJson, stackJson, stackPlanJson } from '../presenters/stacks.js';
import type { AppView } from '../store/app-view.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { appLogStream } from './logs.js';
import { serviceAppName } from '../stacks/service-spec.js';

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

  r.get('/stacks', (c) => c.json(listStacks(db).map((s) => full(s.id))));

  r.post('/stacks', async (c) => {
    const dryRun = yes(c.req.query('dry_run'));
    const result = createStack(deps, await jsonBody(c), restOrigin(c), { dryRun, changedBy: c.var.user?.username ?? null });
    return answer(c, result, dryRun, 201);
  });

  r.get('/stacks/:stackID', (c) => c.json(full(stackOf(c).id)));

  r.put('/stacks/:stackID', async (c) => {
    const dryRun = yes(c.req.query('dry_run'));
    const result = updateStack(deps, stackOf(c).id, await jsonBody(c), restOrigin(c), { dryRun, changedBy: c.var.user?.username ?? null });
    return answer(c, result, dryRun, 200);
  });

  r.delete('/stacks/:stackID', (c) => {
    deleteStack(deps, stackOf(c).id, restOrigin(c), { purge: yes(c.req.query('purge')) });
    return c.body(null, 204);
  });

  r.post('/stacks/:stackID/deploys', async (c) => {
    const result = deployStack(deps, stackOf(c).id, await jsonBody(c), restOrigin(c));
    return c.json(stackDeployJson(result.deploy!), 202);
  });

  r.post('/stacks/:stackID/deploys/rollback', (c) => {
    const result = rollbackStack(deps, stackOf(c).id, restOrigin(c));
    return c.json(stackDeployJson(result.deploy!), 202);
  });

  r.get('/stacks/:stackID/deploys', (c) => c.json(listStackDeploys(db, stackOf(c).id).map(stackDeployJson)));

  r.get('/stacks/:stackID/deploys/:deployID', (c) => {
    const stack = stackOf(c);
    const d = getStackDeploy(db, idParam(c, 'deployID', 'stack deploy'));
    if (!d || d.stackId !== stack.id) throw notFound('stack deploy');
    return c.json(stackDeployJson(d));
  });

  r.get('/stacks/:stackID/events', (c) => {
    const after = z.coerce.number().int().min(0).catch(0).parse(c.req.query('after') ?? 0);
    return c.json(listStackEvents(db, stackOf(c).id, after).map(stackEventJson));
  });

  r.get('/stacks/:stackID/variables/:key/reveal', (c) => {
    const key = envKeySchema.safeParse(c.req.param('key'));
    if (!key.success) throw notFound('stack variable');
    const revealed = revealStackVar(deps, stackOf(c).id, key.data);
    deps.log.info('stack variable revealed', { stack_id: c.req.param('stackID'), variable: revealed.key, by: c.var.user?.username });
    c.header('cache-control', 'no-store');
    return c.json(revealed);
  });

  r.get('/stacks/:stackID/services/:service/logs/stream', (c) => {
    const stack = stackOf(c);
    const app = serviceAppName(stack.name, c.req.param('service') ?? '');
    const row = app ? stackApps(db, stack.id).find((a) => a.name === app) : undefined;
    if (!row) throw notFound('stack service');
    return appLogStream(deps, c, row.id);
  });

  return r;
}
