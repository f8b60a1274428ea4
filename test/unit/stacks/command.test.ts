// The stacks command on a real :memory: SQLite with the JSON stand-in loader: what create, update and
// delete write, the dry-run plan per service, and refusals that change nothing.
import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue, testSealer } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { composeText, jsonComposeLoader, type ServiceDraft } from '../../support/stack-loader.js';
import { createStack, deleteStack, deployStack, revealStackVar, rollbackStack, updateStack, type StackCtx } from '../../../src/desired/stacks.js';
import { apps, serviceLinks, stackDeploys, stacks, stackVarHistory, stackVars } from '../../../src/store/schema/index.js';
import { createService } from '../../../src/desired/services.js';
import { createDeploy, updateDeploy } from '../../../src/store/deploys.js';
import { observeApp } from '../../../src/observed/apps.js';
import { activeStackDeploy, getStackByName } from '../../../src/store/stacks.js';
import { DomainError } from '../../../src/errors.js';
import { dbRows as dumpTables } from '../../support/db-snapshot.js';

const FOUR: ServiceDraft[] = [
  { name: 'db', image: 'svc-test/stack:1', volumes: [{ kind: 'named', volume: 'db-data', target: '/data', readOnly: false }], environment: { PASSWORD: '${DB_PASSWORD}' } },
  { name: 'cache', image: 'svc-test/stack:1', expose: [6379] },
  { name: 'worker', image: 'svc-test/stack:1', dependsOn: [{ service: 'db', condition: 'service_healthy' }, { service: 'cache', condition: 'service_started' }] },
  { name: 'web', image: 'svc-test/stack:1', route: { kind: 'port', publishedPort: 18080, port: 3000 }, dependsOn: [{ service: 'db', condition: 'service_healthy' }] },
];

function setup() {
  const db = memoryDb();
  const enqueue = recordingEnqueue();
  const ctx: StackCtx = { ...commandCtx(db, { enqueue, sealer: testSealer() }), loadCompose: jsonComposeLoader };
  return { db, enqueue, ctx };
}

/** What a successful deploy of each step leaves: the service's live deploy runs the app's definition. */
function deployAll(ctx: StackCtx) {
  const d = activeStackDeploy(ctx.db, getStackByName(ctx.db, 'shop')!.id)!;
  for (const step of d.steps) {
    const dep = createDeploy(ctx.db, () => {}, undefined, { appId: step.appId, appName: 'x', imageRef: 'svc-test/stack:1', trigger: 'manual' });
    updateDeploy(ctx.db, undefined, dep.id, { status: 'success' });
    observeApp(ctx.db, step.appId, { liveDeployId: dep.id });
  }
  ctx.db.update(stackDeploys).set({ status: 'success' }).where(eq(stackDeploys.id, d.id)).run();
}

const create = (ctx: StackCtx, extra: Record<string, unknown> = {}) =>
  createStack(ctx, { name: 'shop', compose: composeText(FOUR), variables: [{ key: 'DB_PASSWORD', value: 'hunter2', is_secret: true }], ...extra }, 'api');

describe('stacks command', () => {
  it('creates one app per service and a stack deploy of all of them in depends_on order', () => {
    const { db, ctx, enqueue } = setup();
    const { stack, plan, deploy } = create(ctx);
    expect(plan.services.map((s) => [s.service, s.action, s.stop_first])).toEqual([
      ['db', 'create', true], ['cache', 'create', false], ['worker', 'create', false], ['web', 'create', false],
    ]);
    const rows = db.select().from(apps).where(eq(apps.stackId, stack.id)).all();
    expect(rows.map((r) => r.name).sort()).toEqual(['shop-cache', 'shop-db', 'shop-web', 'shop-worker']);
    const web = rows.find((r) => r.name === 'shop-web')!;
    expect([web.accessMode, web.fallbackPort, web.internalPort, web.imageRef]).toEqual(['port', 18080, 3000, 'svc-test/stack:1']);
    const dbApp = rows.find((r) => r.name === 'shop-db')!;
    expect([dbApp.deployStrategy, dbApp.fallbackPort, dbApp.domain]).toEqual(['stop_first', null, null]);
    // The definition is sealed: the interpolated secret is in no column in clear.
    expect(JSON.stringify(rows)).not.toContain('hunter2');
    expect(deploy!.steps.map((s) => s.service)).toEqual(['db', 'cache', 'worker', 'web']);
    expect(deploy!.status).toBe('pending');
    expect(enqueue.keys).toContain('stack:shop');
    expect(db.select().from(stackVars).get()!.value).toBeNull();
    expect(revealStackVar(ctx, stack.id, 'DB_PASSWORD').value).toBe('hunter2');
  });

  it('plans without writing on dry_run', () => {
    const { db, ctx } = setup();
    const before = dumpTables(db);
    const { plan, deploy } = createStack(ctx, { name: 'shop', compose: composeText(FOUR) }, 'api', { dryRun: true });
    expect(plan.ok).toBe(true);
    expect(plan.services.every((s) => s.action === 'create')).toBe(true);
    expect(deploy).toBeNull();
    expect(dumpTables(db)).toEqual(before);
  });

  it('refuses a file with problems with a 400 naming the service and key, and writes nothing', () => {
    const { db, ctx } = setup();
    const before = dumpTables(db);
    const text = JSON.stringify({ problems: [{ service: 'web', key: 'privileged', message: 'a stack never gets the host' }] });
    const err = (() => { try { createStack(ctx, { name: 'shop', compose: text }, 'api'); } catch (e) { return e; } })() as DomainError;
    expect(err).toBeInstanceOf(DomainError);
    expect([err.kind, err.code]).toEqual(['invalid', 'invalid_compose']);
    expect(err.message).toBe('service web: privileged: a stack never gets the host');
    expect(dumpTables(db)).toEqual(before);
    // The dry run shows the same refusal per service.
    const dry = createStack(ctx, { name: 'shop', compose: text }, 'api', { dryRun: true });
    expect(dry.plan.services).toEqual([{ service: 'web', app: 'shop-web', action: 'refused', changes: [], stop_first: false, problems: [{ service: 'web', key: 'privileged', message: 'a stack never gets the host' }] }]);
  });

  it('refuses a service whose app name is taken by an app of its own', () => {
    const { db, ctx } = setup();
    db.insert(apps).values({ name: 'shop-web', internalPort: 3000 }).run();
    expect(() => create(ctx)).toThrow(/service web: name: an app named shop-web already exists/);
    expect(db.select().from(stacks).all()).toEqual([]);
  });

  it('update: only the changed service is in the deploy, with the keys that changed', () => {
    const { db, ctx } = setup();
    const { stack } = create(ctx);
    deployAll(ctx);
    const changed = FOUR.map((s) => (s.name === 'web' ? { ...s, command: ['httpd', '-f'], environment: { MODE: 'v2' } } : s));
    const dry = updateStack(ctx, stack.id, { compose: composeText(changed) }, 'api', { dryRun: true });
    expect(dry.plan.services.map((s) => [s.service, s.action, s.changes])).toEqual([
      ['db', 'unchanged', []], ['cache', 'unchanged', []], ['worker', 'unchanged', []], ['web', 'change', ['command', 'environment.MODE']],
    ]);
    const { deploy } = updateStack(ctx, stack.id, { compose: composeText(changed) }, 'api');
    expect(deploy!.steps.map((s) => [s.service, s.action, s.previousDeployId !== null])).toEqual([['web', 'change', true]]);
    expect(db.select().from(stacks).get()!.configVersion).toBe(1);
  });

  it('a no-op update queues an empty deploy that is done at once', () => {
    const { ctx } = setup();
    const { stack } = create(ctx);
    deployAll(ctx);
    const { plan, deploy } = updateStack(ctx, stack.id, { compose: composeText(FOUR) }, 'api');
    expect(plan.services.every((s) => s.action === 'unchanged')).toBe(true);
    expect([deploy!.status, deploy!.steps]).toEqual(['success', []]);
  });

  it('a changed secret variable changes the services that interpolate it, naming the key only', () => {
    const { ctx } = setup();
    const { stack } = create(ctx);
    deployAll(ctx);
    const { plan } = updateStack(ctx, stack.id, { variables: [{ key: 'DB_PASSWORD', value: 'swordfish', is_secret: true }] }, 'api', { changedBy: 'ann' });
    expect(plan.services.filter((s) => s.action === 'change').map((s) => [s.service, s.changes])).toEqual([['db', ['environment.PASSWORD']]]);
    expect(JSON.stringify(plan)).not.toContain('swordfish');
    const history = ctx.db.select().from(stackVarHistory).all();
    expect(history.map((h) => [h.action, h.value, h.changedBy])).toEqual([['created', null, null], ['updated', null, 'ann']]);
  });

  it('a service left out of the file is removed with its app', () => {
    const { db, ctx, enqueue } = setup();
    const { stack } = create(ctx);
    deployAll(ctx);
    const { plan } = updateStack(ctx, stack.id, { compose: composeText(FOUR.filter((s) => s.name !== 'cache')) }, 'api');
    expect(plan.services.find((s) => s.service === 'cache')!.action).toBe('remove');
    expect(db.select().from(apps).where(eq(apps.name, 'shop-cache')).get()).toBeUndefined();
    expect(enqueue.keys).toContain('app:shop-cache');
  });

  it('a manual deploy redeploys the services named', () => {
    const { ctx } = setup();
    const { stack } = create(ctx);
    deployAll(ctx);
    expect(deployStack(ctx, stack.id, { services: ['cache'] }, 'api').deploy!.steps.map((s) => s.service)).toEqual(['cache']);
    expect(() => deployStack(ctx, stack.id, { services: ['nope'] }, 'api')).toThrow(/service nope is not in the stack/);
  });

  it('a rollback runs the file of the newest successful deploy of another file again', () => {
    const { db, ctx } = setup();
    const { stack } = create(ctx);
    expect(() => rollbackStack(ctx, stack.id, 'api')).toThrow(/no earlier successful deploy/);
    deployAll(ctx);
    const changed = FOUR.map((s) => (s.name === 'web' ? { ...s, command: ['httpd'] } : s));
    updateStack(ctx, stack.id, { compose: composeText(changed) }, 'api');
    deployAll(ctx);
    const { deploy } = rollbackStack(ctx, stack.id, 'api');
    expect([deploy!.trigger, deploy!.steps.map((s) => [s.service, s.changes])]).toEqual(['rollback', [['web', ['command']]]]);
    expect(db.select().from(stacks).get()!.compose).toBe(composeText(FOUR));
  });

  it('delete removes the stack and its service apps', () => {
    const { db, ctx, enqueue } = setup();
    const { stack } = create(ctx);
    deleteStack(ctx, stack.id, 'api');
    expect(db.select().from(apps).all()).toEqual([]);
    expect(db.select().from(stacks).all()).toEqual([]);
    expect(db.select().from(stackVars).all()).toEqual([]);
    expect(enqueue.keys).toEqual(expect.arrayContaining(['app:shop-web', 'app:shop-db', 'stack:shop']));
  });
});

describe('stacks command: x-svc links and jobs', () => {
  const withSvc = (svc: Partial<ServiceDraft['svc']>) => composeText([{ name: 'web', image: 'svc-test/stack:1', svc: { links: [], jobs: [], ...svc } }]);

  it('links the service app to svc services and gives it the jobs; an unknown service or a bad schedule is refused naming the key, writing nothing', () => {
    const { db, ctx } = setup();
    const pg = createService(ctx, { name: 'pg', type: 'postgres' }, 'api');
    const before = dumpTables(db);
    const refused = (svc: Partial<ServiceDraft['svc']>) => {
      try {
        createStack(ctx, { name: 'shop', compose: withSvc(svc) }, 'api');
      } catch (e) {
        return ((e as DomainError).details as { problems: { key: string }[] }).problems.map((p) => p.key);
      }
      return [];
    };
    expect(refused({ links: [{ service: 'nope' }] })).toEqual(['x-svc.links[0].service']);
    expect(refused({ links: [{ service: 'pg' }, { service: 'pg' }] })).toEqual(['x-svc.links[1].alias']);
    expect(refused({ jobs: [{ name: 'nightly', schedule: 'every day', command: ['true'] }] })).toEqual(['x-svc.jobs[0].schedule']);
    expect(dumpTables(db)).toEqual(before);

    const { stack } = createStack(ctx, { name: 'shop', compose: withSvc({ links: [{ service: 'pg', alias: 'DB' }], jobs: [{ name: 'nightly', schedule: '0 3 * * *', command: ['sh', '-c', 'echo hi'], timeoutSeconds: 60 }] }) }, 'api');
    const web = db.select().from(apps).where(eq(apps.stackId, stack.id)).get()!;
    expect(db.select().from(serviceLinks).where(eq(serviceLinks.appId, web.id)).all().map((l) => [l.serviceId, l.alias])).toEqual([[pg.id, 'DB']]);
    expect(JSON.parse(web.jobs)).toEqual([{ name: 'nightly', schedule: '0 3 * * *', command: ['sh', '-c', 'echo hi'], timeout_seconds: 60, concurrency: 'forbid' }]);
    // A changed link is a change of the service (its variables come with the next deploy); removing it unlinks.
    deployAll(ctx);
    const res = updateStack(ctx, stack.id, { compose: withSvc({}) }, 'api');
    expect(res.plan.services[0]).toMatchObject({ action: 'change', changes: ['x-svc.jobs', 'x-svc.links'] });
    expect(db.select().from(serviceLinks).where(eq(serviceLinks.appId, web.id)).all()).toEqual([]);
    expect(db.select().from(apps).where(eq(apps.id, web.id)).get()!.jobs).toBe('[]');
  });
});
