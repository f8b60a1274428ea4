// `svc stacks` and `svc apply` of a Compose file (issue 32): the words and flags parsed into one request (a
// usage problem is a sentence), the calls each action makes, a Compose file sent as the Stack document named
// after its folder, and `svc apply` waiting for the stack deploy it queued.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStacksArgs, stacksCommand, type StacksOptions } from '../../../src/cli/stacks.js';
import { readPath } from '../../../src/cli/apply.js';
import { waitForDeploys } from '../../../src/cli/apply-wait.js';
import { composeAsStackDoc, isComposeText, stackNameOf } from '../../../src/manifests/compose-doc.js';
import { parseManifestFile } from '../../../src/manifests/parse.js';
import { recordingClient } from './recording-client.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-cli-stacks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const COMPOSE = 'services:\n  web:\n    image: nginx:1.27\n';

const parse = (words: string[], v: Record<string, unknown> = {}) => parseStacksArgs(words, v);

describe('parseStacksArgs', () => {
  it('reads each action with its flags', () => {
    expect(parse([])).toMatchObject({ action: 'list', json: false });
    expect(parse(['list'], { json: true })).toMatchObject({ action: 'list', json: true });
    expect(parse(['show', 'blog'])).toMatchObject({ action: 'show', name: 'blog' });
    expect(parse(['create', 'blog'], { file: 'c.yml', var: ['A=1'], secret: ['PW=x=y'], 'dry-run': true })).toMatchObject({ action: 'create', file: 'c.yml', vars: ['A=1'], secrets: ['PW=x=y'], dryRun: true });
    expect(parse(['create', 'stats'], { template: 'umami', input: ['DOMAIN=stats.example.com'] })).toMatchObject({ template: 'umami', inputs: ['DOMAIN=stats.example.com'] });
    expect(parse(['deploy', 'blog'], { service: ['web'] })).toMatchObject({ action: 'deploy', services: ['web'] });
    expect(parse(['delete', 'blog'], { purge: true })).toMatchObject({ action: 'delete', purge: true });
  });

  it('says what is wrong', () => {
    expect(parse(['start', 'blog'])).toMatch(/^unknown action "start"/);
    expect(parse(['show'])).toBe('missing argument NAME');
    expect(parse(['show', 'a', 'b'])).toBe('unexpected argument "b"');
    expect(parse(['list', 'a'])).toBe('unexpected argument "a"');
    expect(parse(['create', 'blog'])).toBe('give -f FILE (a Compose file) or --template NAME');
    expect(parse(['create', 'blog'], { file: 'a', template: 'b' })).toBe('give -f FILE (a Compose file) or --template NAME');
    expect(parse(['create', 'blog'], { template: 'umami', var: ['A=1'] })).toBe('--var and --secret do not apply with --template (use --input)');
    expect(parse(['create', 'blog'], { file: 'c.yml', var: ['A'] })).toBe('"A" is not KEY=VALUE');
    expect(parse(['update', 'blog'])).toBe('-f FILE is required');
    expect(parse(['delete', 'blog'], { file: 'x' })).toBe('--file does not apply to delete');
    expect(parse(['rollback', 'blog'], { purge: true })).toBe('--purge does not apply to rollback');
  });
});

const STACK = {
  id: 4, name: 'blog', owner: 'rest',
  services: [{ service: 'web', app: 'blog-web', image: 'nginx:1.27', status: 'active', serving: true, status_reason: null, replicas: 1, route: { domain: 'blog.example.com', port: 80 } }],
  variables: [{ key: 'PW', value: null, is_secret: true }],
  last_deploy: { id: 9, status: 'success', trigger: 'create', error: null, steps: [{ service: 'web', action: 'create', status: 'success', changes: [] }], created_at: '2026-12-02T04:00:00Z' },
};
const run = async (o: StacksOptions, answers: Record<string, unknown>) => {
  const { client, calls } = recordingClient(answers);
  let out = '';
  const code = await stacksCommand(client, o, (s) => (out += s));
  return { code, out, calls };
};
const opts = (words: string[], v: Record<string, unknown> = {}) => parse(words, v) as StacksOptions;

describe('svc stacks', () => {
  it('lists, shows, deploys, rolls back and deletes by name', async () => {
    const list = await run(opts([]), { 'GET /api/stacks': [STACK] });
    expect(list.out).toBe('NAME  STATUS  SERVICES  LAST DEPLOY\nblog  active  web       #9 success\n');
    const json = await run(opts([], { json: true }), { 'GET /api/stacks': [STACK] });
    expect(JSON.parse(json.out)).toEqual([STACK]);
    const show = await run(opts(['show', 'blog']), { 'GET /api/stacks': [STACK] });
    expect(show.out).toContain('web      blog-web  active  nginx:1.27  blog.example.com -> 80  1');
    expect(show.out).toContain('last deploy #9 (create) success\n  web create success\n');
    expect(show.out).toContain('variables: PW (secret)');
    const deploy = await run(opts(['deploy', 'blog'], { service: ['web'] }), { 'GET /api/stacks': [STACK], 'POST /api/stacks/4/deploys': { id: 10, status: 'pending', steps: [{ service: 'web', action: 'change' }] } });
    expect(deploy.calls).toEqual(['GET /api/stacks', 'POST /api/stacks/4/deploys {"services":["web"]}']);
    expect(deploy.out).toBe('stack deploy #10 pending: web change\n');
    const back = await run(opts(['rollback', 'blog']), { 'GET /api/stacks': [STACK], 'POST /api/stacks/4/deploys/rollback': { id: 11, status: 'pending', steps: [] } });
    expect(back.calls[1]).toBe('POST /api/stacks/4/deploys/rollback {}');
    const del = await run(opts(['delete', 'blog'], { purge: true }), { 'GET /api/stacks': [STACK], 'DELETE /api/stacks/4': undefined });
    expect(del.calls[1]).toBe('DELETE /api/stacks/4?purge=true');
    await expect(run(opts(['show', 'nope']), { 'GET /api/stacks': [STACK] })).rejects.toThrow('no stack named nope');
  });

  it('creates from a Compose file or a template and prints the plan per service', async () => {
    const file = join(dir, 'c.yml');
    writeFileSync(file, COMPOSE);
    const plan = { ok: true, services: [{ service: 'db', action: 'create', changes: [], stop_first: true, problems: [] }, { service: 'web', action: 'unchanged', changes: [], stop_first: false, problems: [] }], warnings: [] };
    const made = await run(opts(['create', 'blog'], { file, var: ['A=1'], secret: ['PW=a=b'], 'dry-run': true }), { 'POST /api/stacks': { dry_run: true, plan } });
    expect(made.calls).toEqual([`POST /api/stacks?dry_run=true ${JSON.stringify({ name: 'blog', compose: COMPOSE, variables: [{ key: 'A', value: '1' }, { key: 'PW', value: 'a=b', is_secret: true }] })}`]);
    expect(made.out).toBe('+ db create (stopped first)\n= web unchanged\n(dry run: nothing changed)\n');
    const t = await run(opts(['create', 'stats'], { template: 'umami', input: ['DOMAIN=stats.example.com'] }), { 'POST /api/templates/umami/stacks': { id: 5, plan, deploy: { id: 12 } } });
    expect(t.calls).toEqual(['POST /api/templates/umami/stacks {"name":"stats","inputs":{"DOMAIN":"stats.example.com"}}']);
    expect(t.out).toContain('stack stats created; stack deploy #12 queued');
  });
});

describe('svc apply of a Compose file', () => {
  it('tells a Compose file from a manifest, and names the stack after its folder', () => {
    expect(isComposeText(COMPOSE)).toBe(true);
    expect(isComposeText('apiVersion: svc/v1\nkind: App\nmetadata: {name: web}\n')).toBe(false);
    expect(isComposeText('services: [a]\n')).toBe(false);
    expect(isComposeText(`${COMPOSE}---\n${COMPOSE}`)).toBe(false);
    expect(isComposeText('services: {\n')).toBe(false);
    expect(stackNameOf('My_Blog.v2')).toBe('my-blog-v2');
    expect(stackNameOf('___')).toBeUndefined();
    expect(stackNameOf('x'.repeat(50))).toBe('x'.repeat(40));
    const doc = parseManifestFile('docker-compose.yml', composeAsStackDoc('blog', COMPOSE));
    expect(doc.errors).toEqual([]);
    expect(doc.docs[0]!.doc).toEqual({ apiVersion: 'svc/v1', kind: 'Stack', metadata: { name: 'blog' }, spec: { compose: COMPOSE } });
  });

  it('sends a Compose file as the Stack of its folder, or of --name; manifests as they are', () => {
    const folder = join(dir, 'My Shop');
    mkdirSync(join(folder, 'infra'), { recursive: true });
    writeFileSync(join(folder, 'docker-compose.yml'), COMPOSE);
    writeFileSync(join(folder, 'infra', 'compose.yaml'), COMPOSE);
    const manifest = 'apiVersion: svc/v1\nkind: Service\nmetadata: {name: db}\nspec: {type: postgres}\n';
    writeFileSync(join(folder, 'db.yaml'), manifest);
    const one = readPath(join(folder, 'docker-compose.yml'));
    expect(one.map((f) => f.name)).toEqual(['docker-compose.yml']);
    expect(JSON.parse(one[0]!.content).metadata.name).toBe('my-shop');
    expect(JSON.parse(readPath(join(folder, 'docker-compose.yml'), 'shop')[0]!.content).metadata.name).toBe('shop');
    expect(() => readPath(join(folder, 'db.yaml'), 'shop')).toThrow('--name applies to a Compose file only');
    const all = readPath(folder);
    expect(all.map((f) => [f.name, f.content.startsWith('{') ? JSON.parse(f.content).metadata.name : 'manifest'])).toEqual([
      ['db.yaml', 'manifest'], ['docker-compose.yml', 'my-shop'], ['infra/compose.yaml', 'infra'],
    ]);
  });

  it('waits for the stack deploy the apply queued and counts a rolled-back one as failed', async () => {
    let polls = 0;
    const { client } = recordingClient({ 'GET /api/stacks/4/deploys/9': () => (++polls < 2 ? { status: 'running', error: null } : { status: 'rolled_back', error: 'web failed its health check' }) });
    const lines: string[] = [];
    const failed = await waitForDeploys(client, [{ kind: 'Stack', name: 'blog', action: 'create', changes: [], stack_id: 4, stack_deploy_id: 9 }], (l) => lines.push(l), { pollMs: 1 });
    expect(failed).toBe(1);
    expect(lines).toEqual(['waiting for the deploy (--no-wait to skip)', 'Stack/blog: stack deploy 9 ended rolled_back: web failed its health check (svc stacks show blog)']);
  });
});
