import { describe, it, expect } from 'vitest';
import { APP_DEFAULTS } from '../../../src/desired/apps.js';
import type { SourcedDoc } from '../../../src/manifests/parse.js';
import type { AppSpec } from '../../../src/manifests/schema.js';
import { planManifests, type PlanInput } from '../../../src/manifests/plan.js';
import type { CurrentApp, CurrentService, CurrentState } from '../../../src/manifests/state.js';

const appDoc = (name: string, spec: AppSpec, file = 'a.yaml', document = 0): SourcedDoc => ({
  file, document, doc: { apiVersion: 'svc/v1', kind: 'App', metadata: { name }, spec },
});
const svcDoc = (name: string, type: 'postgres' | 'redis' | 'mysql' | 'garage', file = 's.yaml', document = 0): SourcedDoc => ({
  file, document, doc: { apiVersion: 'svc/v1', kind: 'Service', metadata: { name }, spec: { type } },
});
const current = (name: string, o: Partial<CurrentApp> = {}, fields: Partial<CurrentApp['fields']> = {}): CurrentApp => ({
  id: 1, name, owner: 'dir', fields: { ...APP_DEFAULTS, ...fields } as CurrentApp['fields'], env: [], links: [],
  liveImage: null, openImages: [], failedImages: [], ...o,
});
const service = (name: string, o: Partial<CurrentService> = {}): CurrentService => ({ id: 1, name, type: 'postgres', owner: 'dir', version: '17', upgradingTo: null, deleting: false, ...o });
const plan = (docs: SourcedDoc[], state: Partial<CurrentState> = {}, o: Partial<PlanInput> = {}) =>
  planManifests({
    source: 'dir', docs, state: { apps: [], services: [], ...state }, prune: true, pruneServices: false,
    keepFiles: new Set(), previous: [], reservedPorts: [3000], ...o,
  });
const actions = (p: ReturnType<typeof plan>) => p.resources.map((r) => [r.kind, r.name, r.action, r.changes]);

describe('planManifests', () => {
  it('creates what does not exist, with a deploy of the named image', () => {
    const p = plan([svcDoc('db', 'postgres'), appDoc('web', { image_ref: 'img:1', fallback_port: 8080, services: [{ name: 'db' }] })]);
    expect(actions(p)).toEqual([['Service', 'db', 'create', []], ['App', 'web', 'create', ['services.db']]]);
    expect(p.createServices).toEqual([{ name: 'db', type: 'postgres' }]);
    expect(p.apps[0].diff).toMatchObject({ deployImage: 'img:1', links: [{ op: 'link', service: 'db', alias: null }] });
    expect(p.apps[0].diff.fields).toMatchObject({ imageRef: 'img:1', fallbackPort: 8080, internalPort: 3000, accessMode: 'port' });
  });

  it('the same desired state again is all unchanged and deploys nothing', () => {
    const live = current('web', { liveImage: 'img:1', env: [{ key: 'A', value: '1', isSecret: false, required: false }], links: [{ service: 'db', alias: 'DB' }] }, { imageRef: 'img:1', fallbackPort: 8080 });
    const p = plan([svcDoc('db', 'postgres'), appDoc('web', { image_ref: 'img:1', fallback_port: 8080, env: [{ key: 'A', value: '1' }], services: [{ name: 'db', alias: 'DB' }] })], { apps: [live], services: [service('db')] });
    expect(actions(p)).toEqual([['Service', 'db', 'unchanged', []], ['App', 'web', 'unchanged', []]]);
    expect(p.apps[0].diff.deployImage).toBeNull();
  });

  it('names changed fields, env keys and links; absent fields return to the defaults', () => {
    const live = current('web', { liveImage: 'img:1', env: [{ key: 'A', value: '1', isSecret: false, required: false }, { key: 'OLD', value: 'x', isSecret: false, required: false }], links: [{ service: 'db', alias: null }] }, { imageRef: 'img:1', fallbackPort: 8080, healthCheckPath: '/h' });
    const p = plan([appDoc('web', { image_ref: 'img:2', fallback_port: 8080, env: [{ key: 'A', value: '2' }], services: [{ name: 'db', alias: 'DB' }] })], { apps: [live], services: [service('db')] });
    expect(actions(p)).toEqual([['App', 'web', 'update', ['image_ref', 'health_check_path', 'env.A', 'env.OLD', 'services.db']]]);
    expect(p.apps[0].diff).toMatchObject({
      fields: { imageRef: 'img:2', healthCheckPath: '/' },
      env: [{ op: 'set', key: 'A', value: '2' }, { op: 'delete', key: 'OLD' }],
      links: [{ op: 'unlink', service: 'db' }, { op: 'link', service: 'db', alias: 'DB' }],
      deployImage: 'img:2',
    });
  });

  it('an env entry without value keeps the stored value and flags; absent env and services are not managed', () => {
    const live = current('web', { env: [{ key: 'S', value: 'hunter2', isSecret: true, required: true }], links: [{ service: 'db', alias: null }] }, { fallbackPort: 8080 });
    expect(actions(plan([appDoc('web', { fallback_port: 8080, env: [{ key: 'S' }] })], { apps: [live], services: [service('db')] }))).toEqual([['App', 'web', 'unchanged', []]]);
    expect(actions(plan([appDoc('web', { fallback_port: 8080 })], { apps: [live], services: [service('db')] }))).toEqual([['App', 'web', 'unchanged', []]]);
    const p = plan([appDoc('web', { fallback_port: 8080, env: [{ key: 'S', is_secret: false }] })], { apps: [live] });
    expect(p.apps[0].diff.env).toEqual([{ op: 'set', key: 'S', value: 'hunter2', isSecret: false, required: true }]);
  });

  it('image_ref absent is left as deploys wrote it; no deploy without a named image', () => {
    const live = current('web', { liveImage: 'ci:abc' }, { imageRef: 'ci:abc', fallbackPort: 8080 });
    const p = plan([appDoc('web', { fallback_port: 8080 })], { apps: [live] });
    expect(actions(p)).toEqual([['App', 'web', 'unchanged', []]]);
  });

  it('an image already queued or running is not deployed twice', () => {
    const live = current('web', { openImages: ['img:2'] }, { imageRef: 'img:2', fallbackPort: 8080 });
    const p = plan([appDoc('web', { image_ref: 'img:2', fallback_port: 8080 })], { apps: [live] });
    expect(actions(p)).toEqual([['App', 'web', 'unchanged', []]]);
  });

  it('an image whose deploy failed is not retried in a loop (the flip-back restored the old image_ref)', () => {
    const live = current('web', { liveImage: 'img:1', failedImages: ['img:2'] }, { imageRef: 'img:1', fallbackPort: 8080 });
    const p = plan([appDoc('web', { image_ref: 'img:2', fallback_port: 8080 })], { apps: [live] });
    expect(actions(p)).toEqual([['App', 'web', 'unchanged', []]]);
    expect(p.resources[0].note).toContain('failed to deploy before');
  });

  it('a deploy waits for required variables without a value, and says so', () => {
    const p = plan([appDoc('web', { image_ref: 'img:1', fallback_port: 8080, env: [{ key: 'TOKEN', is_secret: true, required: true }] })]);
    expect(p.apps[0].diff.deployImage).toBeNull();
    expect(p.resources[0].note).toContain('TOKEN');
    const set = current('web', { env: [{ key: 'TOKEN', value: 't', isSecret: true, required: true }] }, { imageRef: 'img:1', fallbackPort: 8080 });
    const later = plan([appDoc('web', { image_ref: 'img:1', fallback_port: 8080, env: [{ key: 'TOKEN', is_secret: true, required: true }] })], { apps: [set] });
    // The image did not change: the deploy that waited starts, and the plan does not call it `image_ref`.
    expect(actions(later)).toEqual([['App', 'web', 'update', []]]);
    expect(later.resources[0].deploy).toBe('img:1');
    expect(later.apps[0].diff.deployImage).toBe('img:1');
  });

  it('an external_service app is routed only, never deployed', () => {
    const p = plan([appDoc('ext', { app_type: 'external_service', source: 'http://10.0.0.5:9000', image_ref: 'x:1', fallback_port: 8080 })]);
    expect(p.apps[0].diff.deployImage).toBeNull();
  });

  it('never touches a rest resource: the document is an error and its whole file drops out', () => {
    const p = plan([svcDoc('cache', 'redis', 'f.yaml', 0), appDoc('web', { fallback_port: 8080 }, 'f.yaml', 1), appDoc('api', { fallback_port: 8081 }, 'g.yaml')], {
      apps: [current('web', { owner: 'rest' }, { fallbackPort: 9000 })],
    });
    expect(p.errors).toEqual([{ file: 'f.yaml', document: 1, path: 'metadata.name', message: expect.stringContaining('through the API') }]);
    expect(actions(p)).toEqual([['App', 'api', 'create', []]]);
  });

  it('prunes only its own apps; services only with prune_services and when nothing links them', () => {
    const state = {
      apps: [current('mine', {}, { fallbackPort: 1 }), current('theirs', { owner: 'git' }, { fallbackPort: 2 }), current('rest', { owner: 'rest' }, { fallbackPort: 3 }), current('user', { owner: 'rest', links: [{ service: 'used', alias: null }] }, { fallbackPort: 4 })],
      services: [service('gone'), service('used'), service('restdb', { owner: 'rest' })],
    };
    expect(actions(plan([], state))).toEqual([['App', 'mine', 'delete', []]]);
    const p = plan([], state, { pruneServices: true });
    expect(actions(p)).toEqual([['App', 'mine', 'delete', []], ['Service', 'gone', 'delete', []], ['Service', 'used', 'unchanged', []]]);
    expect(p.resources[2].note).toContain('still linked to user');
    expect(plan([], state, { source: 'api', prune: false, pruneServices: true }).resources).toEqual([]);
  });

  it('keeps what a bad file declared last time instead of pruning it', () => {
    const state = { apps: [current('a', {}, { fallbackPort: 1 }), current('b', {}, { fallbackPort: 2 })] };
    const p = plan([], state, { keepFiles: new Set(['bad.yaml']), previous: [{ kind: 'App', name: 'a', file: 'bad.yaml' }, { kind: 'App', name: 'b', file: 'gone.yaml' }] });
    expect(actions(p)).toEqual([['App', 'b', 'delete', []]]);
    expect(plan([], state, { noPrune: true }).resources).toEqual([]);
  });

  it('cross-document rules: duplicates, app rules, taken domain or port, unknown service, colliding link variables', () => {
    const state = { apps: [current('other', { owner: 'rest' }, { fallbackPort: 7000, domain: 'taken.example', accessMode: 'domain' })], services: [service('pg1'), service('pg2')] };
    const cases: [SourcedDoc[], string][] = [
      [[appDoc('w', { fallback_port: 8080 }), appDoc('w', { fallback_port: 8081 }, 'a.yaml', 1)], 'metadata.name'],
      [[appDoc('w', { access_mode: 'domain' })], 'spec.domain'],
      [[appDoc('w', {})], 'spec.fallback_port'],
      [[appDoc('w', { fallback_port: 3000 })], 'spec.fallback_port'],
      [[appDoc('w', { app_type: 'adopted_container', fallback_port: 8080 })], 'spec.source'],
      [[appDoc('w', { fallback_port: 7000 })], 'spec.fallback_port'],
      [[appDoc('w', { access_mode: 'domain', domain: 'taken.example' })], 'spec.domain'],
      [[appDoc('w', { fallback_port: 8080 }), appDoc('v', { fallback_port: 8080 }, 'a.yaml', 1)], 'spec.fallback_port'],
      [[appDoc('w', { fallback_port: 8080, services: [{ name: 'nope' }] })], 'spec.services.0.name'],
      [[appDoc('w', { fallback_port: 8080, services: [{ name: 'pg1' }, { name: 'pg2' }] })], 'spec.services.1.alias'],
      [[appDoc('w', { fallback_port: 8080, env: [{ key: 'BIG', value: 'x'.repeat(64 * 1024 + 1) }] })], 'spec.env.0.value'],
      [[svcDoc('pg1', 'redis')], 'spec.type'],
      // pg1 runs 17: another version is a guarded upgrade, never a manifest apply
      [[{ ...svcDoc('pg1', 'postgres'), doc: { apiVersion: 'svc/v1', kind: 'Service', metadata: { name: 'pg1' }, spec: { type: 'postgres', version: '18' } } } as SourcedDoc], 'spec.version'],
    ];
    for (const [docs, path] of cases) {
      const p = plan(docs, state);
      expect(p.errors.map((e) => e.path), path).toContain(path);
      expect(p.apps, path).toEqual([]);
      expect(p.createServices, path).toEqual([]);
    }
  });

  it('replacing a linked service unlinks the old one before linking the new (their variable names collide)', () => {
    const live = current('web', { links: [{ service: 'pg1', alias: null }] }, { fallbackPort: 8080 });
    const p = plan([appDoc('web', { fallback_port: 8080, services: [{ name: 'pg2' }] })], { apps: [live], services: [service('pg1'), service('pg2')] });
    expect(p.apps[0].diff.links).toEqual([{ op: 'unlink', service: 'pg1' }, { op: 'link', service: 'pg2', alias: null }]);
  });

  it('a link to a service from a dropped file drops the linking file too', () => {
    const p = plan([svcDoc('db', 'postgres', 's.yaml', 0), svcDoc('db', 'postgres', 's.yaml', 1), appDoc('web', { fallback_port: 8080, services: [{ name: 'db' }] }, 'w.yaml')]);
    expect(p.errors.map((e) => [e.file, e.path])).toEqual([['s.yaml', 'metadata.name'], ['w.yaml', 'spec.services.0.name']]);
    expect(p.resources).toEqual([]);
  });

  it('a service of another manifest source may be declared (unchanged); one being deleted is an error', () => {
    expect(actions(plan([svcDoc('db', 'postgres')], { services: [service('db', { owner: 'git' })] }))).toEqual([['Service', 'db', 'unchanged', []]]);
    expect(plan([svcDoc('db', 'postgres')], { services: [service('db', { deleting: true })] }).errors[0].message).toContain('being deleted');
  });

  it.each([
    ['a later version without the flag: an error that shows the plan', '18', {}, {}, /upgrade of service db from 17 to 18: a backup first.*--allow-upgrade/],
    ['an older version: a restore, never an upgrade', '16', {}, { allowUpgrade: true }, /16 is older, and a downgrade is a restore/],
    ['a version the type is not offered at', '99', {}, { allowUpgrade: true }, /offered at versions 15, 16, 17, 18/],
    ['another version while one upgrade runs', '18', { version: '16', upgradingTo: '17' }, { allowUpgrade: true }, /being upgraded to 17/],
  ] as const)('service versions: %s', (_what, declared, cur, o, message) => {
    const doc = { ...svcDoc('db', 'postgres'), doc: { apiVersion: 'svc/v1', kind: 'Service', metadata: { name: 'db' }, spec: { type: 'postgres', version: declared } } } as SourcedDoc;
    const p = plan([doc], { services: [service('db', cur)] }, o);
    expect(p.errors.map((e) => [e.path, e.message])).toEqual([['spec.version', expect.stringMatching(message)]]);
    expect(p.upgradeServices).toEqual([]);
  });

  it('service versions: a later version with the flag is an update whose note is the plan; the version under way is unchanged', () => {
    const doc = (version: string) => ({ ...svcDoc('db', 'postgres'), doc: { apiVersion: 'svc/v1', kind: 'Service', metadata: { name: 'db' }, spec: { type: 'postgres', version } } }) as SourcedDoc;
    const p = plan([doc('18')], { services: [service('db')] }, { allowUpgrade: true });
    expect(p.errors).toEqual([]);
    expect(p.upgradeServices).toEqual([{ name: 'db', version: '18' }]);
    expect(p.resources).toEqual([expect.objectContaining({ kind: 'Service', name: 'db', action: 'update', changes: ['version'], note: expect.stringMatching(/^upgrade of service db from 17 to 18/) })]);
    const running = plan([doc('18')], { services: [service('db', { upgradingTo: '18' })] });
    expect(running.errors).toEqual([]);
    expect(running.resources).toEqual([expect.objectContaining({ action: 'unchanged', note: 'the upgrade to 18 is under way' })]);
    expect(running.upgradeServices).toEqual([]);
  });
});
