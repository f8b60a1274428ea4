// `kind: Stack` manifests (issue 32): the document, its pure plan against the current stacks (create, update
// of the file or the variables, unchanged, prune; a stack's service apps never planned as Apps), and the
// apply through POST /api/manifests/apply with the real Compose loader (the stacks command's own dry run
// refuses a file that cannot run, naming the document).
import { describe, expect, it } from 'vitest';
import { APP_DEFAULTS } from '../../../src/desired/apps.js';
import { parseManifestFile, type SourcedDoc } from '../../../src/manifests/parse.js';
import { planManifests, type PlanInput } from '../../../src/manifests/plan.js';
import { diffStack } from '../../../src/manifests/plan-stack.js';
import type { CurrentApp, CurrentStack, CurrentState } from '../../../src/manifests/state.js';
import { loadCompose } from '../../../src/stacks/compose/load.js';
import { listStacks, listStackVars, stackApps } from '../../../src/store/stacks.js';
import { createTestApi } from '../../support/api.js';

const COMPOSE = 'services:\n  web:\n    image: nginx:1.27-alpine\n    x-svc: {domain: blog.example.com, port: 80}\n';
const stackYaml = (name: string, spec: string) => `apiVersion: svc/v1\nkind: Stack\nmetadata: {name: ${name}}\nspec:\n${spec}`;

const stackDoc = (name: string, compose = COMPOSE, variables?: { key: string; value?: string; is_secret?: boolean }[], file = 'stack.yaml'): SourcedDoc => ({
  file, document: 0, doc: { apiVersion: 'svc/v1', kind: 'Stack', metadata: { name }, spec: { compose, ...(variables ? { variables } : {}) } },
});
const currentStack = (name: string, o: Partial<CurrentStack> = {}): CurrentStack => ({ id: 7, name, owner: 'dir', compose: COMPOSE, variables: [], ...o });
const serviceApp = (name: string, stackId: number): CurrentApp => ({
  id: 3, name, owner: 'dir', stackId, fields: { ...APP_DEFAULTS } as CurrentApp['fields'], env: [], links: [], liveImage: null, openImages: [], failedImages: [],
});
const plan = (docs: SourcedDoc[], state: Partial<CurrentState> = {}, o: Partial<PlanInput> = {}) =>
  planManifests({ source: 'dir', docs, state: { apps: [], services: [], stacks: [], ...state }, prune: true, pruneServices: false, keepFiles: new Set(), previous: [], reservedPorts: [3000], ...o });
const actions = (p: ReturnType<typeof plan>) => p.resources.map((r) => [r.kind, r.name, r.action, r.changes]);

describe('the Stack document', () => {
  it('reads the Compose file and variables; refuses unknown fields, a long name and duplicate keys', () => {
    const ok = parseManifestFile('s.yaml', stackYaml('blog', `  compose: |\n    services:\n      web: {image: nginx:1.27}\n  variables:\n    - {key: DOMAIN, value: blog.example.com}\n    - {key: DB_PASSWORD, is_secret: true}\n`));
    expect(ok.errors).toEqual([]);
    expect(ok.docs[0]!.doc).toMatchObject({ kind: 'Stack', metadata: { name: 'blog' }, spec: { compose: 'services:\n  web: {image: nginx:1.27}\n', variables: [{ key: 'DOMAIN' }, { key: 'DB_PASSWORD', is_secret: true }] } });
    const bad = parseManifestFile('s.yaml', stackYaml('x'.repeat(41), `  compose: "services: {}"\n  replicas: 2\n  variables:\n    - {key: A}\n    - {key: A}\n`));
    expect(bad.docs).toEqual([]);
    expect(bad.errors.map((e) => e.path).sort()).toEqual(['metadata.name', 'spec', 'spec.variables.1']);
    expect(parseManifestFile('s.yaml', stackYaml('blog', '  variables: []\n')).errors.map((e) => e.path)).toEqual(['spec.compose']);
  });
});

describe('diffStack', () => {
  it('names the file and each variable that changes, and sends only those', () => {
    const cur = currentStack('blog', { variables: [{ key: 'A', value: '1', isSecret: false, required: false }, { key: 'GONE', value: 'x', isSecret: false, required: false }] });
    expect(diffStack({ compose: COMPOSE }, cur)).toEqual({ changes: [], body: {} });
    expect(diffStack({ compose: COMPOSE, variables: [{ key: 'A' }, { key: 'GONE' }] }, cur)).toEqual({ changes: [], body: {} });
    const d = diffStack({ compose: COMPOSE + '# more\n', variables: [{ key: 'A', value: '2' }, { key: 'NEW', is_secret: true }] }, cur);
    expect(d.changes).toEqual(['compose', 'variables.A', 'variables.NEW', 'variables.GONE']);
    expect(d.body).toEqual({ compose: COMPOSE + '# more\n', variables: [{ key: 'A', value: '2' }, { key: 'NEW', is_secret: true }] });
    expect(diffStack({ compose: COMPOSE }, undefined)).toEqual({ changes: [], body: { compose: COMPOSE, variables: [] } });
  });
});

describe('planManifests with stacks', () => {
  it('creates, updates, leaves alone and prunes stacks of its source; never another source\'s or a rest one', () => {
    const state = { stacks: [currentStack('same'), currentStack('old', { id: 8 }), currentStack('theirs', { id: 9, owner: 'git' }), currentStack('changed', { id: 10 })] };
    const p = plan([stackDoc('new'), stackDoc('same'), stackDoc('changed', COMPOSE.replace('1.27', '1.28'))], state);
    expect(actions(p)).toEqual([
      ['Stack', 'new', 'create', []],
      ['Stack', 'same', 'unchanged', []],
      ['Stack', 'changed', 'update', ['compose']],
      ['Stack', 'old', 'delete', []],
    ]);
    expect(p.stacks.map((s) => [s.name, s.create])).toEqual([['new', true], ['changed', false]]);
    expect(p.deleteStacks).toEqual(['old']);
    const rest = plan([stackDoc('mine')], { stacks: [currentStack('mine', { owner: 'rest' })] });
    expect(rest.errors.map((e) => e.message)).toEqual(['stack mine was created through the API or UI; manifests do not change it']);
    expect(rest.stacks).toEqual([]);
  });

  it('never prunes a stack\'s service apps as Apps, and refuses an App document naming one', () => {
    const state = { apps: [serviceApp('blog-web', 7)], stacks: [currentStack('blog')] };
    expect(plan([stackDoc('blog')], state).deleteApps).toEqual([]);
    const p = plan([{ file: 'a.yaml', document: 0, doc: { apiVersion: 'svc/v1', kind: 'App', metadata: { name: 'blog-web' }, spec: {} } }, stackDoc('blog')], state);
    expect(p.errors.map((e) => [e.file, e.message])).toEqual([['a.yaml', "app blog-web is a service of stack blog; change the stack's Compose file instead"]]);
  });
});

describe('POST /api/manifests/apply with a Stack', () => {
  const apply = async (t: ReturnType<typeof createTestApi>, text: string, query = '') =>
    (await t.request('POST', `/api/manifests/apply${query}`, undefined, { raw: text, contentType: 'application/yaml', headers: { origin: 'http://localhost' } })).body;
  const doc = (compose: string, vars = '') => stackYaml('blog', `  compose: |\n${compose.split('\n').map((l) => (l ? `    ${l}` : l)).join('\n')}\n${vars}`);

  it('creates the stack and its deploy, says what happens per service, then changes nothing when applied again', async () => {
    const t = createTestApi({ loadCompose });
    await t.login();
    const dry = await apply(t, doc(COMPOSE), '?dry_run=true');
    expect(dry.errors).toEqual([]);
    expect(dry.resources).toEqual([expect.objectContaining({ kind: 'Stack', name: 'blog', action: 'create', services: [{ service: 'web', action: 'create', changes: [] }] })]);
    expect(listStacks(t.db)).toEqual([]);

    const made = await apply(t, doc(COMPOSE, '  variables:\n    - {key: SECRET, value: s3, is_secret: true}\n'));
    expect(made.errors).toEqual([]);
    const stack = listStacks(t.db)[0]!;
    expect([stack.name, stack.owner]).toEqual(['blog', 'api']);
    expect(made.resources[0]).toMatchObject({ kind: 'Stack', action: 'create', stack_id: stack.id, stack_deploy_id: expect.any(Number) });
    expect(stackApps(t.db, stack.id).map((a) => [a.name, a.owner])).toEqual([['blog-web', 'api']]);
    expect(listStackVars(t.db, stack.id).map((v) => [v.key, v.isSecret])).toEqual([['SECRET', true]]);

    const again = await apply(t, doc(COMPOSE, '  variables:\n    - {key: SECRET, is_secret: true}\n'), '?prune=true');
    expect(again.resources.map((r: any) => `${r.kind}/${r.name}:${r.action}`)).toEqual(['Stack/blog:unchanged']);
  });

  it('refuses a file that cannot run, naming the document, the service and the key; nothing is written', async () => {
    const t = createTestApi({ loadCompose });
    await t.login();
    const r = await apply(t, doc('services:\n  web:\n    image: nginx:1.27\n    privileged: true\n'));
    expect(r.errors).toEqual([expect.objectContaining({ file: 'request', document: 0, path: 'spec.compose', message: expect.stringMatching(/^service web: privileged: /) })]);
    expect(listStacks(t.db)).toEqual([]);
  });
});
