import { describe, it, expect } from 'vitest';
import { eq } from 'drizzle-orm';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { listAppsWithDeployVersion } from '../../../src/store/apps.js';
import { appDetailJson, appsListJson } from '../../../src/presenters/app-json-sql.js';
import { listDeploys } from '../../../src/store/deploys.js';
import { apps, deploys } from '../../../src/store/schema/index.js';
import { appJson } from '../../../src/presenters/app-json.js';
import { deployJson } from '../../../src/presenters/deploy-json.js';
import type { Db } from '../../../src/store/db.js';
import { createApp } from '../../support/commands.js';
import { observeApp } from '../../../src/observed/apps.js';

const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'));

/** Apps and deploys that cover every branch of the derived fields and every column type. */
function variedDb(): Db {
  const db = memoryDb();
  const enqueue = recordingEnqueue();
  createApp(db, enqueue, { name: 'plain', fallbackPort: 8080 }, 'rest');
  const site = createApp(db, enqueue, { name: 'site', accessMode: 'domain', domain: 'shop.example.com', imageRef: 'ghcr.io/a/b:1', ciWorkflow: '.github/workflows/release.yml', previews: '{"enabled":true,"env":{"A":"x\\\"y"},"forks":false,"max":5,"resources":{"cpus":0.5,"memory_mb":256},"services":"none","ttl_days":7}' }, 'rest');
  const odd = createApp(db, enqueue, { name: 'odd', fallbackPort: 9000, appType: 'external_service', source: 'http://10.0.0.5:9000/"q"\\ü\n\u2028', healthCheckPath: '/health?x="1"', repoUrl: null }, 'dir');
  // A live deploy whose config is current (config_changed false), and one made before an env change (true).
  const live = db.insert(deploys).values({ appId: site.id, imageRef: 'ghcr.io/a/b:1', trigger: 'manual', status: 'success', configVersion: 3, envDiff: { added: ['A'], removed: [], changed: ['B"'] }, startedAt: '2026-11-22T10:00:00Z', completedAt: '2026-11-22T10:00:05Z' }).returning().get();
  db.insert(deploys).values({ appId: site.id, trigger: 'webhook', status: 'failed', error: 'health check "/" failed', commitSha: 'abc', watchUntil: '2026-11-22T10:01:00Z' }).run();
  db.update(apps).set({ configVersion: 3 }).where(eq(apps.id, site.id)).run();
  observeApp(db, site.id, { liveDeployId: live.id, status: 'error', serving: true, statusReason: 'health check "/" failed', liveContainerName: 'svc-site-1', liveImage: 'ghcr.io/a/b:1', imageBasis: 'ghcr.io/a/b:1' });
  const old = db.insert(deploys).values({ appId: odd.id, trigger: 'rollback', status: 'success', configVersion: 1 }).returning().get();
  db.update(apps).set({ configVersion: 2 }).where(eq(apps.id, odd.id)).run();
  observeApp(db, odd.id, { liveDeployId: old.id, routeError: 'port 9000 is already in use' });
  // A live deploy without a recorded version (older rows): not "changed".
  const legacy = createApp(db, enqueue, { name: 'legacy', fallbackPort: 9001 }, 'rest');
  const unversioned = db.insert(deploys).values({ appId: legacy.id, trigger: 'manual', status: 'success' }).returning().get();
  db.update(apps).set({ configVersion: 5 }).where(eq(apps.id, legacy.id)).run();
  observeApp(db, legacy.id, { liveDeployId: unversioned.id, port: 80, portBasis: 3000, liveImage: 'svc-build/legacy:abc', imageBasis: null });
  // Observed values the spec changed since (the spec shows), and an adopted app made managed by its deploy.
  const changed = createApp(db, enqueue, { name: 'changed', fallbackPort: 9002, internalPort: 4000, imageRef: 'img:new', appType: 'adopted_container', source: 'legacy-box' }, 'rest');
  observeApp(db, changed.id, { liveDeployId: unversioned.id, port: 80, portBasis: 3000, liveImage: 'img:old', imageBasis: 'img:older' });
  // Domain mode without a domain has no access URL.
  db.insert(apps).values({ name: 'nodomain', accessMode: 'domain', domain: null, fallbackPort: null }).run();
  // Replicas and limits: both limits, one of them (the other null), none (resources null).
  createApp(db, enqueue, { name: 'limited', fallbackPort: 8090, replicas: 3, memoryMb: 256, cpus: 0.5 }, 'rest');
  createApp(db, enqueue, { name: 'memonly', fallbackPort: 8091, replicas: 0, memoryMb: 64 }, 'rest');
  return db;
}

describe('app JSON rendered by SQLite', () => {
  it('the list is byte for byte what appJson gives for every app, newest first', () => {
    const db = variedDb();
    for (const host of ['box.lan', '[::1]', 'h"ost']) {
      const expected = JSON.stringify(listAppsWithDeployVersion(db).map((a) => appJson(a.app, a.deployedConfigVersion, host)));
      expect(text(appsListJson(db, host))).toBe(expected);
    }
    const parsed = JSON.parse(text(appsListJson(db, 'box.lan'))!) as { name: string; config_changed: boolean; access_url: string | null }[];
    expect(parsed.map((a) => [a.name, a.config_changed, a.access_url])).toEqual([
      ['memonly', false, 'http://box.lan:8091'],
      ['limited', false, 'http://box.lan:8090'],
      ['nodomain', false, null],
      ['changed', false, 'http://box.lan:9002'],
      ['legacy', false, 'http://box.lan:9001'],
      ['odd', true, 'http://box.lan:9000'],
      ['site', false, 'https://shop.example.com'],
      ['plain', false, 'http://box.lan:8080'],
    ]);
  });

  it('one app is appJson plus deploys (deployJson, newest first), byte for byte; unknown id is undefined', () => {
    const db = variedDb();
    for (const a of listAppsWithDeployVersion(db)) {
      const expected = JSON.stringify({ ...appJson(a.app, a.deployedConfigVersion, 'box.lan'), deploys: listDeploys(db, a.app.id).map(deployJson) });
      expect(text(appDetailJson(db, a.app.id, 'box.lan'))).toBe(expected);
    }
    expect(JSON.parse(text(appDetailJson(db, 2, 'x'))!).deploys.map((d: { trigger: string }) => d.trigger)).toEqual(['webhook', 'manual']);
    expect(appDetailJson(db, 999, 'box.lan')).toBeUndefined();
  });

  it('image_ref, internal_port and app_type show the live deploy\'s unless the spec changed since', () => {
    const db = variedDb();
    const byName = Object.fromEntries((JSON.parse(text(appsListJson(db, 'h'))!) as { name: string }[]).map((a) => [a.name, a]));
    expect(byName.legacy).toMatchObject({ internal_port: 80, image_ref: 'svc-build/legacy:abc', app_type: 'managed' });
    expect(byName.changed).toMatchObject({ internal_port: 4000, image_ref: 'img:new', app_type: 'managed' });
    expect(byName.plain).toMatchObject({ internal_port: 3000, image_ref: null, app_type: 'managed', status: 'inactive' });
  });

  it('no apps: an empty array', () => {
    expect(text(appsListJson(memoryDb(), 'box.lan'))).toBe('[]');
  });
});
