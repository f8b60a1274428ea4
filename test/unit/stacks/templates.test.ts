// The template catalog (templates/<name>/): every template loads with sample inputs and generated values and
// passes the catalog's rules (pinned images, health checks, named volumes, nothing refused, no warning); the
// rules catch what they are for; inputs are checked and generated values have their length and alphabet.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCompose } from '../../../src/stacks/compose/load.js';
import { findTemplate, generateValue, listTemplates, templateProblems, templateVariables, type StackTemplate } from '../../../src/stacks/templates.js';

describe('the shipped templates', () => {
  const templates = listTemplates();

  it('are at least 20, including the ones issue 32 names', () => {
    expect(templates.length).toBeGreaterThanOrEqual(20);
    const names = templates.map((t) => t.name);
    for (const n of ['plausible', 'umami', 'uptime-kuma', 'n8n', 'forgejo', 'vaultwarden', 'ghost', 'wordpress', 'nextcloud', 'metabase', 'grafana-prometheus', 'outline', 'listmonk', 'mattermost', 'paperless-ngx', 'immich']) expect(names).toContain(n);
  });

  it.each(listTemplates().map((t) => [t.name, t] as const))('%s loads with generated values and passes the rules', (_n, t) => {
    expect(templateProblems(t)).toEqual([]);
    const variables = templateVariables(t, Object.fromEntries(t.inputs.filter((i) => i.default === undefined).map((i) => [i.name, i.kind === 'email' ? 'me@example.org' : i.kind === 'url' ? 'https://sso.example.org/x' : i.kind === 'domain' ? 'Site.Example.org' : 'given'])));
    const load = loadCompose({ text: t.compose, variables });
    expect(load.ok && load.warnings).toEqual([]);
    if (!load.ok) return;
    const routed = load.stack.services.filter((s) => s.route);
    expect(routed.map((s) => s.route)).toContainEqual(expect.objectContaining({ kind: 'domain', domain: variables.DOMAIN }));
    // Every generated secret reaches the services, none is left as text in the file.
    for (const g of t.generated) expect(JSON.stringify(load.stack)).toContain(variables[g.name]);
    for (const s of load.stack.services) for (const v of s.volumes) expect(v.kind).toBe('named');
  });

  it('finds one by name and refuses names that are not one', () => {
    expect(findTemplate('plausible')?.title).toBe('Plausible Analytics');
    for (const bad of ['nope', '../templates', 'Plausible', '']) expect(findTemplate(bad)).toBeUndefined();
  });
});

describe('template rules', () => {
  const base: StackTemplate = {
    name: 'x',
    title: 'X',
    description: 'x',
    category: 'test',
    inputs: [{ name: 'DOMAIN', title: 'Domain', kind: 'domain', required: true }],
    generated: [{ name: 'PASSWORD', alphabet: 'alnum', length: 24 }],
    services: [],
    compose: 'services:\n  web:\n    image: nginx:1.27.3\n    environment: {P: "${PASSWORD}"}\n    healthcheck: {test: [CMD, "true"]}\n    volumes: [data:/data]\n    x-svc: {domain: "${DOMAIN}", port: 80}\nvolumes:\n  data:\n',
  };
  const withCompose = (f: (c: string) => string): StackTemplate => ({ ...base, compose: f(base.compose) });

  it('pass a good one', () => {
    expect(templateProblems(base)).toEqual([]);
  });

  it.each<[string, StackTemplate, RegExp]>([
    ['an unpinned image', withCompose((c) => c.replace('nginx:1.27.3', 'nginx')), /pinned/],
    ['a latest tag', withCompose((c) => c.replace('nginx:1.27.3', 'nginx:latest')), /pinned/],
    ['no healthcheck', withCompose((c) => c.replace('    healthcheck: {test: [CMD, "true"]}\n', '')), /healthcheck/],
    ['a refused key', withCompose((c) => c.replace('    volumes: [data:/data]', '    volumes: [data:/data]\n    privileged: true')), /privileged/],
    ['an anonymous volume (a warning)', withCompose((c) => c.replace('[data:/data]', '[data:/data, /cache]')), /warning: .*anonymous/],
    ['a bind mount', withCompose((c) => c.replace('[data:/data]', '[data:/data, ./conf:/conf]')), /bind-mount/],
    ['a variable nobody declares', withCompose((c) => c.replace('"${PASSWORD}"', '"${PASSWORD}${OTHER}"')), /OTHER is not set/],
    ['a declared variable never used', { ...base, generated: [...base.generated, { name: 'UNUSED', alphabet: 'hex', length: 32 }] }, /UNUSED is declared but/],
    ['no route', withCompose((c) => c.replace('    x-svc: {domain: "${DOMAIN}", port: 80}\n', '    labels: {d: "${DOMAIN}"}\n')), /no service is routed/],
    ['a name twice', { ...base, generated: [...base.generated, { name: 'DOMAIN', alphabet: 'hex', length: 32 }] }, /DOMAIN is declared twice/],
  ])('catch %s', (_n, t, want) => {
    expect(templateProblems(t).join('\n')).toMatch(want);
  });

  it('refuse a template.yml outside the schema when the catalog is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-templates-'));
    try {
      mkdirSync(join(dir, 'bad'));
      writeFileSync(join(dir, 'bad', 'compose.yml'), base.compose);
      writeFileSync(join(dir, 'bad', 'template.yml'), 'title: Bad\ndescription: d\ncategory: c\ninputs: [{name: domain, title: D, kind: domain}]\n');
      expect(() => listTemplates(dir)).toThrow(/bad\/template.yml: inputs.0.name/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('template variables', () => {
  const t = {
    inputs: [
      { name: 'DOMAIN', title: 'Domain', kind: 'domain' as const, required: true },
      { name: 'ADMIN_EMAIL', title: 'Admin e-mail', kind: 'email' as const, required: true },
      { name: 'TZ', title: 'Time zone', kind: 'text' as const, default: 'UTC', required: true },
      { name: 'NOTE', title: 'Note', kind: 'text' as const, required: false },
    ],
    generated: [
      { name: 'PASSWORD', alphabet: 'alnum' as const, length: 40 },
      { name: 'HEX', alphabet: 'hex' as const, length: 33 },
      { name: 'KEY', alphabet: 'base64' as const, bytes: 32 },
      { name: 'B64', alphabet: 'base64' as const, length: 20 },
    ],
  };

  it('fill defaults, lower-case the domain and generate each value with its length and alphabet', () => {
    const v = templateVariables(t, { DOMAIN: 'App.Example.COM', ADMIN_EMAIL: 'me@example.com' });
    expect(v).toMatchObject({ DOMAIN: 'app.example.com', ADMIN_EMAIL: 'me@example.com', TZ: 'UTC', NOTE: '' });
    expect(v.PASSWORD).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(v.HEX).toMatch(/^[0-9a-f]{33}$/);
    expect(Buffer.from(v.KEY, 'base64')).toHaveLength(32);
    expect(v.B64).toMatch(/^[A-Za-z0-9+/]{20}$/);
    expect(templateVariables(t, { DOMAIN: 'a.example.com', ADMIN_EMAIL: 'me@example.com' }).PASSWORD).not.toBe(v.PASSWORD);
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ ADMIN_EMAIL: 'me@example.com' }, /DOMAIN \(Domain\) is required/],
    [{ DOMAIN: 'not a domain', ADMIN_EMAIL: 'me@example.com' }, /DOMAIN must be a host name/],
    [{ DOMAIN: 'a.example.com', ADMIN_EMAIL: 'nope' }, /ADMIN_EMAIL must be a valid email/],
    [{ DOMAIN: 'a.example.com', ADMIN_EMAIL: 'me@example.com', OTHER: 'x' }, /OTHER is not an input/],
  ])('refuse %j', (given, want) => {
    expect(() => templateVariables(t, given)).toThrow(want);
  });

  it('alnum values are unbiased enough: every symbol appears in a long value', () => {
    const v = generateValue({ name: 'X', alphabet: 'alnum', length: 256 }, (n) => Buffer.from(Array.from({ length: n }, (_, i) => i % 256)));
    expect(new Set(v).size).toBe(62);
  });
});
