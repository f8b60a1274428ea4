import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { memoizedParser, parseManifestFile } from '../../../src/manifests/parse.js';
import { manifestJsonSchema } from '../../../src/manifests/schema.js';

const app = (spec: string, name = 'web') => `apiVersion: svc/v1\nkind: App\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

describe('manifest documents', () => {
  it('accepts every App field, env entries with and without value, and links', () => {
    const text = app(`  app_type: managed
  build_mode: svc_build
  project_type: node
  source: null
  repo_url: https://github.com/acme/web
  branch: release/1
  internal_port: 8080
  image_ref: ghcr.io/acme/web:1
  domain: Web.Example.com
  fallback_port: null
  access_mode: domain
  health_check_path: /healthz
  env:
    - { key: NODE_ENV, value: production }
    - { key: SESSION_SECRET, is_secret: true, required: true }
  services:
    - { name: web-db, alias: DB }
    - { name: cache }
`);
    const r = parseManifestFile('a.yaml', text);
    expect(r.errors).toEqual([]);
    expect(r.docs).toHaveLength(1);
    const doc = r.docs[0].doc;
    expect(doc.kind).toBe('App');
    if (doc.kind !== 'App') return;
    expect(doc.spec).toMatchObject({ domain: 'web.example.com', internal_port: 8080, env: [{ key: 'NODE_ENV', value: 'production' }, { key: 'SESSION_SECRET', is_secret: true, required: true }] });
  });

  it('reads several documents, skips empty ones, and accepts a Service of each type', () => {
    const text = ['postgres', 'mysql', 'redis', 'garage'].map((t) => `apiVersion: svc/v1\nkind: Service\nmetadata: {name: s-${t}}\nspec: {type: ${t}}\n`).join('---\n') + '---\n# nothing\n';
    const r = parseManifestFile('s.yaml', text);
    expect(r.errors).toEqual([]);
    expect(r.docs.map((d) => [d.document, d.doc.metadata.name])).toEqual([[0, 's-postgres'], [1, 's-mysql'], [2, 's-redis'], [3, 's-garage']]);
  });

  it.each([
    ['apiVersion: v1\nkind: App\nmetadata: {name: web}\n', 'apiVersion'],
    ['apiVersion: svc/v1\nkind: Deployment\nmetadata: {name: web}\n', 'kind'],
    ['apiVersion: svc/v1\nkind: App\nmetadata: {name: Web}\n', 'metadata.name'],
    ['apiVersion: svc/v1\nkind: App\nmetadata: {name: web, labels: {}}\n', 'metadata'],
    ['apiVersion: svc/v1\nkind: App\n', 'metadata'],
    [app('  internal_port: 70000\n'), 'spec.internal_port'],
    [app('  internal_port: "80"\n'), 'spec.internal_port'],
    [app('  fallback_port: 0\n'), 'spec.fallback_port'],
    [app('  access_mode: ip\n'), 'spec.access_mode'],
    [app('  app_type: vm\n'), 'spec.app_type'],
    [app('  build_mode: local\n'), 'spec.build_mode'],
    [app('  project_type: rust\n'), 'spec.project_type'],
    [app('  domain: "not a host"\n'), 'spec.domain'],
    [app('  branch: -x\n'), 'spec.branch'],
    [app('  image_ref: "a b"\n'), 'spec.image_ref'],
    [app('  repo_url: "a b"\n'), 'spec.repo_url'],
    [app('  health_check_path: healthz\n'), 'spec.health_check_path'],
    [app('  name: web\n'), 'spec'],
    [app('  replicas: 51\n'), 'spec.replicas'],
    [app('  resources: {memory_mb: 1}\n'), 'spec.resources.memory_mb'],
    [app('  size: 3\n'), 'spec'],
    [app('  env: [{key: 1BAD}]\n'), 'spec.env.0.key'],
    [app('  env: [{key: A, value: 1}]\n'), 'spec.env.0.value'],
    [app('  env: [{key: A, secret: true}]\n'), 'spec.env.0'],
    [app('  env: [{key: A}, {key: A}]\n'), 'spec.env.1'],
    [app('  services: [{name: DB}]\n'), 'spec.services.0.name'],
    [app('  services: [{name: db, alias: db}]\n'), 'spec.services.0.alias'],
    [app('  services: [{name: db}, {name: db}]\n'), 'spec.services.1'],
    ['apiVersion: svc/v1\nkind: Service\nmetadata: {name: db}\nspec: {type: mongo}\n', 'spec.type'],
    ['apiVersion: svc/v1\nkind: Service\nmetadata: {name: db}\nspec: {type: redis, size: 7}\n', 'spec'],
    ['apiVersion: svc/v1\nkind: Service\nmetadata: {name: db}\nspec: {type: redis, version: 6}\n', 'spec.version'],
    ['apiVersion: svc/v1\nkind: Service\nmetadata: {name: db}\n', 'spec'],
  ])('refuses %j at %s', (text, path) => {
    const r = parseManifestFile('bad.yaml', text);
    expect(r.docs).toEqual([]);
    expect(r.errors.map((e) => e.path)).toContain(path);
    expect(r.errors[0]).toMatchObject({ file: 'bad.yaml', document: 0 });
  });

  it('a bad document makes the whole file yield nothing, and names its index', () => {
    const text = `apiVersion: svc/v1\nkind: Service\nmetadata: {name: ok}\nspec: {type: redis}\n---\n` + app('  internal_port: 0\n');
    const r = parseManifestFile('mixed.yaml', text);
    expect(r.docs).toEqual([]);
    expect(r.errors).toEqual([{ file: 'mixed.yaml', document: 1, path: 'spec.internal_port', message: expect.any(String) }]);
  });

  it.each([
    ['key: [unclosed\n', 'invalid YAML'],
    ['a: 1\na: 2\n', 'invalid YAML'],
    ['- just\n- a list\n', 'expected object'],
    ['just a string\n', 'expected object'],
  ])('YAML-level errors are errors of the document: %j', (text, message) => {
    const r = parseManifestFile('y.yaml', text);
    expect(r.docs).toEqual([]);
    expect(r.errors.length).toBeGreaterThan(0);
    expect(r.errors[0].message.toLowerCase()).toContain(message.toLowerCase());
  });

  it('refuses a file over 1 MiB without parsing it', () => {
    const r = parseManifestFile('big.yaml', `# ${'x'.repeat(1024 * 1024)}`);
    expect(r.errors).toEqual([{ file: 'big.yaml', document: -1, path: '', message: expect.stringContaining('larger than') }]);
  });

  it('the memoized parser parses a file again only when its text changed, and forgets files of older passes', () => {
    const m = memoizedParser();
    const text = 'apiVersion: svc/v1\nkind: Service\nmetadata: {name: db}\nspec: {type: redis}\n';
    const first = m.parse('a.yaml', text);
    m.endPass();
    expect(m.parse('a.yaml', text)).toBe(first);
    const changed = m.parse('a.yaml', text.replace('redis', 'postgres'));
    expect(changed).not.toBe(first);
    expect(changed.docs[0].doc).toMatchObject({ spec: { type: 'postgres' } });
    m.endPass();
    m.endPass();
    expect(m.parse('a.yaml', text)).not.toBe(first);
  });

  it('docs/manifest.schema.json is the JSON Schema generated from the zod schemas', () => {
    const published = JSON.parse(readFileSync(new URL('../../../docs/manifest.schema.json', import.meta.url), 'utf8'));
    expect(published).toEqual(manifestJsonSchema());
  });
});
