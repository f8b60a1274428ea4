// Spec apart from status (issue 17 section 2): the app reconciler records what it observed or decided in
// app_status through observed/apps.ts and never writes the spec. The defect this fixes: a build provider's
// port used to be written into the spec's internal_port, so a manifest without internal_port "corrected"
// it back to 3000 and the route pointed at a port nothing listened on.
import { beforeEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { AppHarness } from '../../support/app-harness.js';
import { apps, appStatus } from '../../../src/store/schema/index.js';
import { updateDeploy } from '../../../src/store/deploys.js';

import { appDetailJson } from '../../../src/presenters/app-json-sql.js';
import { desiredRoutes } from '../../../src/reconcilers/proxy/routes.js';
import { readState } from '../../../src/manifests/state.js';
import { diffApp } from '../../../src/manifests/plan-app.js';
import { observeApp, readObserved } from '../../../src/observed/apps.js';
import { memoryDb } from '../../support/db.js';
import { createApp, updateApp } from '../../support/commands.js';

let h: AppHarness;
beforeEach(() => {
  h = new AppHarness();
});

const spec = () => h.db.select().from(apps).where(eq(apps.name, 'web')).get()!;
const routes = () =>
  desiredRoutes(
    h.db
      .select({ name: apps.name, appType: apps.appType, accessMode: apps.accessMode, domain: apps.domain, fallbackPort: apps.fallbackPort, internalPort: apps.internalPort, source: apps.source, port: appStatus.port })
      .from(apps)
      .leftJoin(appStatus, eq(appStatus.appId, apps.id))
      .all(),
  );
const json = () => JSON.parse(Buffer.from(appDetailJson(h.db, h.app().id, 'localhost')!).toString());

/** A svc_build deploy whose provider chose `port` (what the build step records on the deploy). */
async function builtDeploy(port: number, image = 'web:1') {
  const d = h.deploy(image);
  updateDeploy(h.db, undefined, d.id, { buildPort: port });
  await h.drive(undefined, { until: () => h.dep(d.id).status === 'success' });
  await h.drive();
  return d;
}

describe('a build provider\'s port is observed, not written into the spec', () => {
  beforeEach(() => {
    h.makeApp('web', { buildMode: 'svc_build', repoUrl: 'file:///srv/git/web.git' });
  });

  it('the route and probes use the provider\'s port; the spec keeps 3000; a manifest without internal_port plans no change', async () => {
    await builtDeploy(80);
    expect(spec().internalPort).toBe(3000);
    expect(readObserved(h.db, h.app().id)).toMatchObject({ port: 80, portBasis: 3000, status: 'active' });
    expect(routes()[0].upstream).toEqual({ kind: 'dns', name: 'web.svc.internal.', port: 80 });
    expect(h.probed.at(-1)).toBe('http://10.0.0.2:80/healthz');
    // The API shows the provider's port as the app's internal_port (docs/api.md "Building from source").
    expect(json()).toMatchObject({ internal_port: 80, image_ref: 'web:1', status: 'active' });

    const current = readState(h.db, h.sealer).apps.find((a) => a.name === 'web')!;
    const diff = diffApp({ build_mode: 'svc_build', repo_url: 'file:///srv/git/web.git', image_ref: 'web:1', fallback_port: 8080, health_check_path: '/healthz' } as never, current);
    expect(diff.changes).toEqual([]);
    expect(diff.deployImage).toBeNull();
    await h.expectSteady();
  });

  it('a spec change of internal_port shows at once and takes effect at the next deploy; the provider\'s port still wins for a provider build', async () => {
    await builtDeploy(80);
    updateApp(h.db, h.enqueue, h.app().id, { internalPort: 8080 });
    expect(json().internal_port).toBe(8080);
    expect(routes()[0].upstream).toMatchObject({ port: 80 }); // the live container still listens on 80
    await builtDeploy(80, 'web:2');
    expect(json().internal_port).toBe(80);
    expect(routes()[0].upstream).toMatchObject({ port: 80 });
    expect(spec().internalPort).toBe(8080);
    await h.expectSteady();
  });

  it('a flip-back returns the route to the port the kept container listens on', async () => {
    h = new AppHarness({ ...h.settings, watchMs: 60_000 });
    h.makeApp('web', { buildMode: 'svc_build', repoUrl: 'file:///srv/git/web.git' });
    await builtDeploy(80);
    const second = h.deploy('web:2');
    updateDeploy(h.db, undefined, second.id, { buildPort: 8080 });
    await h.drive(undefined, { until: () => h.dep(second.id).status === 'success' });
    expect(routes()[0].upstream).toMatchObject({ port: 8080 });
    h.rt.kill('svc-web-2', 1);
    await h.drive();
    expect(h.dep(second.id).status).toBe('auto_rollback');
    expect(h.probed.at(-1)).toBe(`http://${h.rt.containers.get('svc-web-1')!.address}:80/healthz`);
    expect(routes()[0].upstream).toMatchObject({ port: 80 });
    expect(json()).toMatchObject({ internal_port: 80, image_ref: 'web:1', live_container_name: 'svc-web-1' });
    expect(spec().internalPort).toBe(3000);
    await h.expectSteady();
  });

  it('a build with its own Dockerfile (no provider port) serves on the spec\'s internal_port', async () => {
    const d = h.deploy('web:1');
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'success' });
    await h.drive();
    expect(readObserved(h.db, h.app().id)).toMatchObject({ port: 3000, portBasis: 3000 });
    expect(routes()[0].upstream).toMatchObject({ port: 3000 });
    await h.expectSteady();
  });
});

describe('the app\'s image_ref and app_type follow the live deploy without a spec write', () => {
  it('a deploy of another image shows it as the app\'s image_ref; a later spec change wins until the next deploy', async () => {
    h.makeApp();
    await h.deployed('web:1');
    await h.deployed('web:2');
    await h.drive();
    expect(spec().imageRef).toBe('web:1');
    expect(json().image_ref).toBe('web:2');
    updateApp(h.db, h.enqueue, h.app().id, { imageRef: 'web:bad' });
    expect(json().image_ref).toBe('web:bad');
    await h.expectSteady();
  });

  it('an adopted app is managed from its first deploy on, while its spec keeps what the user asked', async () => {
    await h.rt.run({ name: 'legacy', image: 'web:1', network: 'svc-unit', labels: {} });
    h.makeApp('web', { appType: 'adopted_container', source: 'legacy' });
    await h.drive();
    expect(json()).toMatchObject({ app_type: 'adopted_container', live_container_name: 'legacy' });
    await h.deployed('web:2');
    await h.drive();
    expect(spec().appType).toBe('adopted_container');
    expect(json()).toMatchObject({ app_type: 'managed', live_container_name: 'svc-web-1' });
    await h.expectSteady();
  });
});

describe('observed/apps.ts writes only what differs (rule 7)', () => {
  it('a second identical write is no write; a deleted app is skipped', () => {
    const db = memoryDb();
    const app = createApp(db, () => {}, { name: 'w', fallbackPort: 8080 }, 'rest');
    expect(observeApp(db, app.id, { status: 'inactive' })).toBe(false); // the default: no row needed
    expect(db.select().from(appStatus).all()).toEqual([]);
    expect(observeApp(db, app.id, { status: 'active', liveAddress: '10.0.0.2' })).toBe(true);
    const row = db.select().from(appStatus).get();
    expect(observeApp(db, app.id, { status: 'active', liveAddress: '10.0.0.2', liveContainerName: undefined })).toBe(false);
    expect(db.select().from(appStatus).get()).toEqual(row);
    expect(observeApp(db, 999, { status: 'active' })).toBe(false);
    db.delete(apps).where(eq(apps.id, app.id)).run();
    expect(db.select().from(appStatus).all()).toEqual([]); // gone with its app
  });
});

describe('status that tells the truth (issue 18)', () => {
  it('a failed deploy of a serving app: status error as specified, and serving, the live image and the failed deploy\'s error beside it', async () => {
    h.makeApp('web');
    const first = h.deploy('web:v1');
    await h.drive(undefined, { until: () => h.dep(first.id).status === 'success' });
    await h.drive();
    expect(json()).toMatchObject({ status: 'active', serving: true, live_image: 'web:v1', status_reason: null, route_error: null });

    h.rt.images.delete('web:v2');
    h.rt.pullFailures.set('web:v2', 'manifest for web:v2 not found');
    const second = h.deploy('web:v2');
    await h.drive(undefined, { until: () => h.dep(second.id).status === 'failed' });
    await h.drive();
    expect(json()).toMatchObject({ status: 'error', serving: true, live_image: 'web:v1', status_reason: 'pull of web:v2 failed: manifest for web:v2 not found' });

    await h.expectSteady();
  });
});
