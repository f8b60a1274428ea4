// Steady state of the manifests reconciler (DESIGN.md rule 2): the example stack (examples/manifests,
// read from a real directory) is applied, a secret is set by hand as the docs say, the app and service
// reconcilers converge everything on a fake engine, and then applying the same files again writes no row
// (not even the same values), queues no key and starts no deploy; nor does a pass of the app or service
// reconcilers after it. A manifest never fights a reconciler.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/log.js';
import { createManifestsReconciler } from '../../../src/reconcilers/manifests/reconciler.js';
import { createServiceReconciler } from '../../../src/reconcilers/service/reconciler.js';
import { syncGitCheckout } from '../../../src/manifests/git.js';
import { getAppByName } from '../../../src/store/apps.js';
import { getServiceByName } from '../../../src/store/services.js';

import { deploys, services } from '../../../src/store/schema/index.js';
import type { Reconciler } from '../../../src/controller/types.js';
import { AppHarness } from '../../support/app-harness.js';
import { testKey } from '../../support/db.js';
import { dbState } from '../../support/db-snapshot.js';
import { setEnv } from '../../support/commands.js';

const EXAMPLE = join(import.meta.dirname, '../../../examples/manifests');
const IMAGES = ['nginx:1.27-alpine', 'traefik/whoami:v1.11.0'];
let root: string;
let h: AppHarness;
let manifests: Reconciler;
let service: Reconciler;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-mf-steady-'));
  const dir = join(root, 'manifests');
  cpSync(EXAMPLE, dir, { recursive: true });
  h = new AppHarness();
  const config = parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64'), SVC_DATA_DIR: join(root, 'data'), SVC_NETWORK: h.settings.network });
  for (const ref of [...IMAGES, ...Object.values(config.images)]) h.rt.images.add(ref);
  manifests = createManifestsReconciler({
    db: h.db, sealer: h.sealer, enqueue: h.enqueue, bus: h.bus, now: () => new Date(), config, log: silentLogger, dir, pruneServices: true, ensureWatch: () => {},
  });
  service = createServiceReconciler({
    db: h.db, bus: h.bus, runtime: h.rt, sealer: h.sealer, log: silentLogger, now: () => h.now,
    settings: { network: config.network, instance: config.instance, dataDir: config.dataDir },
    httpGet: async () => 200, tcpOpen: async () => true,
  });
  h.rt.execHandler = () => ({ exitCode: 0, stdout: 'PONG\n', stderr: '' });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Runs every service key until it is active, then every app key until it settles (as the queue would). */
async function converge() {
  for (const s of h.db.select().from(services).all()) {
    for (let i = 0; i < 30 && getServiceByName(h.db, s.name)?.status !== 'active'; i++) await service.reconcile(s.name);
  }
  for (const name of ['shop-web', 'shop-worker']) await h.drive(name);
}

describe('manifests reconciler steady state', () => {
  it('the example stack, converged: applying the same files again changes nothing', async () => {
    expect(readdirSync(join(root, 'manifests')).filter((f) => f.endsWith('.yaml'))).toHaveLength(3);
    await manifests.reconcile('dir');
    // The docs' way: the required secret is set once through the API; the next apply starts the deploy.
    setEnv(h.db, h.sealer, h.enqueue, getAppByName(h.db, 'shop-web')!.id, { key: 'SESSION_SECRET', value: 's3cret', isSecret: true }, 'rest');
    await manifests.reconcile('dir');
    await converge();
    expect(getAppByName(h.db, 'shop-web')).toMatchObject({ status: 'active', imageRef: 'nginx:1.27-alpine' });
    expect(getAppByName(h.db, 'shop-worker')).toMatchObject({ status: 'active' });
    expect(h.db.select().from(services).all().map((s) => getServiceByName(h.db, s.name)?.status)).toEqual(['active', 'active']);

    const before = dbState(h.db);
    const keys = h.enqueue.keys.length;
    const mutations = h.mutations().length;
    expect(await manifests.reconcile('dir')).toEqual({});
    expect(await manifests.reconcile('dir')).toEqual({});
    expect(dbState(h.db)).toEqual(before);
    expect(h.enqueue.keys.slice(keys)).toEqual([]);
    expect(h.mutations()).toHaveLength(mutations);
    expect(h.db.select().from(deploys).all().map((d) => d.status)).toEqual(['success', 'success']);
    // and the reconcilers, after the apply, have nothing to do either
    await h.expectSteady('shop-web');
    await h.expectSteady('shop-worker');
    for (const s of h.db.select().from(services).all()) expect(await service.reconcile(s.name)).toEqual({});
    expect(dbState(h.db)).toEqual(before);
  });

  it('a source with a bad file, applied again: the error is recorded once, nothing else is written', async () => {
    writeFileSync(join(root, 'manifests', 'broken.yaml'), 'apiVersion: svc/v1\nkind: App\nmetadata: {name: x\n');
    await manifests.reconcile('dir');
    await converge();
    const before = dbState(h.db);
    const keys = h.enqueue.keys.length;
    await manifests.reconcile('dir');
    await manifests.reconcile('dir');
    expect(dbState(h.db)).toEqual(before);
    expect(h.enqueue.keys.slice(keys)).toEqual([]);
  });

  it('the git source: the same commit again, and an unreachable remote again, write nothing more', async () => {
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe' });
    const bare = join(root, 'remote.git');
    const work = join(root, 'manifests');
    git(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
    git(work, 'init', '--quiet', '--initial-branch=main');
    git(work, 'add', '-A');
    git(work, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '--quiet', '-m', 'stack');
    git(work, 'push', '--quiet', bare, 'main');
    const config = parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64'), SVC_DATA_DIR: join(root, 'data') });
    const fromGit = createManifestsReconciler({
      db: h.db, sealer: h.sealer, enqueue: h.enqueue, bus: h.bus, now: () => new Date(), config, log: silentLogger, dir: join(root, 'none'), pruneServices: true, ensureWatch: () => {},
      git: { location: `file://${bare}`, intervalMs: 60_000, sync: () => syncGitCheckout({ url: `file://${bare}`, branch: 'main', path: '', cloneDir: join(root, 'clone') }) },
    });
    await fromGit.reconcile('git');
    expect(getAppByName(h.db, 'shop-web')).toBeDefined();
    const steady = async () => {
      const before = dbState(h.db);
      const keys = h.enqueue.keys.length;
      expect(await fromGit.reconcile('git')).toEqual({ requeueAfterMs: 60_000 });
      expect(await fromGit.reconcile('git')).toEqual({ requeueAfterMs: 60_000 });
      expect(dbState(h.db)).toEqual(before);
      expect(h.enqueue.keys.slice(keys)).toEqual([]);
    };
    await steady();
    rmSync(bare, { recursive: true });
    await fromGit.reconcile('git'); // records the error once
    await steady();
  });
});
