// The pure parts of the permission middleware and the audit trail: route patterns against paths, field
// names without values, token scopes.
import { describe, expect, it } from 'vitest';
import { paramsOf, isMiddleware } from '../../../src/http/route-match.js';
import { namesOf } from '../../../src/http/audit-trail.js';
import { decide, parseScope, roleCovers } from '../../../src/auth/permissions.js';

describe('route patterns', () => {
  it.each([
    ['/api/apps/:appID/env/:key', '/api/apps/7/env/DB_URL', { appID: '7', key: 'DB_URL' }],
    ['/api/apps/:appID', '/api/apps/7/env', undefined],
    ['/api/apps', '/api/apps', {}],
    ['/invite/:token', '/invite/a%20b', { token: 'a b' }],
    ['/invite/:token', '/invite/%E0%A4%A', undefined],
  ])('%s against %s', (pattern, path, want) => expect(paramsOf(pattern, path)).toEqual(want));

  it('a wildcard use() is a middleware, an all() on an exact path is an endpoint', () => {
    expect(isMiddleware({ method: 'ALL', path: '/api/*' })).toBe(true);
    expect(isMiddleware({ method: 'ALL', path: '/api/x' })).toBe(false);
    expect(isMiddleware({ method: 'GET', path: '/api/*' })).toBe(false);
  });
});

describe('audit field names', () => {
  it('names fields one level deep and never a value; passwords and the CSRF field are not even named', () => {
    expect(namesOf({ key: 'DB', value: 's3cret', vars: { A: 'x', B: { deep: 1 } }, list: [1, 2], password: 'p', _csrf: 't' })).toEqual(['key', 'value', 'vars.A', 'vars.B', 'list']);
    expect(JSON.stringify(namesOf({ key: 'DB', value: 's3cret' }))).not.toContain('s3cret');
    expect(namesOf('text')).toEqual([]);
    expect(namesOf([{ a: 1 }])).toEqual([]);
  });
});

describe('token scopes', () => {
  it('parses the three kinds and nothing else', () => {
    expect(parseScope('read')).toEqual({ kind: 'read' });
    expect(parseScope('admin')).toEqual({ kind: 'admin' });
    expect(parseScope('deploy:web-2')).toEqual({ kind: 'deploy', app: 'web-2' });
    for (const bad of ['deploy:', 'deploy:Web', 'root', 'read ', 'deploy:a/b']) expect(parseScope(bad)).toBeUndefined();
  });

  it('a scope never adds to the role, and a deploy scope is one app', () => {
    expect(decide({ role: 'viewer', apps: null, scopes: ['admin'] }, 'deploy', 'web').ok).toBe(false);
    expect(decide({ role: 'owner', apps: null, scopes: ['deploy:web'] }, 'deploy', 'web').ok).toBe(true);
    expect(decide({ role: 'owner', apps: null, scopes: ['deploy:web'] }, 'deploy', 'api').ok).toBe(false);
    expect(decide({ role: 'owner', apps: null, scopes: ['deploy:web'] }, 'read', undefined).ok).toBe(false);
    expect(decide({ role: 'owner', apps: null, scopes: ['read'] }, 'reveal', 'web').ok).toBe(false);
    expect(roleCovers({ role: 'developer', apps: ['web'] }, { kind: 'deploy', app: 'web' })).toBe(true);
    expect(roleCovers({ role: 'developer', apps: ['web'] }, { kind: 'deploy', app: 'api' })).toBe(false);
    expect(roleCovers({ role: 'viewer', apps: null }, { kind: 'deploy', app: 'web' })).toBe(false);
  });
});
