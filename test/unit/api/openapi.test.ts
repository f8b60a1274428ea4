// The OpenAPI document (issue 34) is kept honest here: every route the permission table knows under /api
// (the register of routes) and every route the API app registered is in it, with the permission the table
// gives it. A route added without a `describeRoute` (src/api/openapi/operation.ts) fails this test by name.
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createTestApi } from '../../support/api.js';
import { RULES } from '../../../src/auth/permissions.js';
import { isMiddleware } from '../../../src/http/route-match.js';

const api = createTestApi();
const doc = async () => {
  const res = await api.request('GET', '/api/openapi.json', undefined, { cookie: 'none' });
  expect(res.status).toBe(200);
  return res.body;
};
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const templated = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
/** The routes of the API app (not the UI's): /api/*, /healthz, /metrics. */
const isApiRoute = (path: string) => path.startsWith('/api/') || path === '/metrics';
const documented = (d: any) => new Set(Object.entries(d.paths).flatMap(([p, item]: [string, any]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)));

describe('GET /api/openapi.json', () => {
  it('is public OpenAPI 3.1 with both security schemes', async () => {
    const d = await doc();
    expect(d.openapi).toBe('3.1.0');
    expect(Object.keys(d.components.securitySchemes).sort()).toEqual(['session', 'token']);
    expect(d.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'session' });
    expect(d.components.securitySchemes.token).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Every operation's tag is in the ordered tag list (a new tag must be placed there).
    const tags = new Set(d.tags.map((t: { name: string }) => t.name));
    const used = new Set(Object.values<any>(d.paths).flatMap((item) => Object.values<any>(item).flatMap((op) => op.tags)));
    expect([...used].filter((t) => !tags.has(t))).toEqual([]);
  });

  it('describes every /api route of the permission table (the register): an undocumented route fails here by name', async () => {
    const have = documented(await doc());
    const missing = Object.keys(RULES)
      .filter((k) => isApiRoute(k.split(' ')[1]))
      .map((k) => `${k.split(' ')[0]} ${templated(k.split(' ')[1])}`)
      .filter((k) => !have.has(k));
    expect(missing, `routes missing from the OpenAPI document: add an op({...}) (src/api/openapi/operation.ts) to each of\n  ${missing.join('\n  ')}\n`).toEqual([]);
  });

  it('describes every route the API registered, and nothing that is not registered', async () => {
    const have = documented(await doc());
    const registered = new Set(
      api.app.routes
        .filter((r) => !isMiddleware(r) && METHODS.includes(r.method) && isApiRoute(r.path))
        .map((r) => `${r.method} ${templated(r.path)}`),
    );
    expect([...registered].filter((k) => !have.has(k)), 'registered but undocumented').toEqual([]);
    expect([...have].filter((k) => !registered.has(k)), 'documented but not registered').toEqual([]);
  });

  it("gives each operation the permission table's action, roles and token scopes", async () => {
    const d = await doc();
    const p = (path: string, m: string) => d.paths[path][m];
    expect(p('/api/apps', 'post')['x-svc-permission']).toMatchObject({ action: 'manage', roles: ['owner', 'admin'], token_scopes: ['admin'] });
    expect(p('/api/apps', 'get')['x-svc-permission']).toMatchObject({ action: 'read', token_scopes: ['read', 'admin'] });
    expect(p('/api/apps/{appID}/deploys', 'post')['x-svc-permission']).toMatchObject({ action: 'deploy', per_app: true, token_scopes: ['admin', 'deploy:<app>'] });
    expect(p('/api/apps/{appID}/deploys', 'post').security).toEqual([{ session: [] }, { token: ['admin'] }, { token: ['deploy:<app>'] }]);
    expect(p('/api/auth/status', 'get').security).toEqual([]);
    expect(p('/api/auth/status', 'get').responses['401']).toBeUndefined();
    for (const [path, item] of Object.entries<any>(d.paths)) {
      for (const [m, op] of Object.entries<any>(item)) {
        const rule = RULES[`${m.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`];
        expect(op['x-svc-permission']?.action, `${m} ${path}`).toBe(rule.action);
        if (rule.action !== 'public') expect(Object.keys(op.responses), `${m} ${path}`).toEqual(expect.arrayContaining(['401', '403']));
        if (path.includes('{')) expect(Object.keys(op.responses), `${m} ${path}`).toContain('404');
        expect(op.summary, `${m} ${path}`).toBeTruthy();
      }
    }
  });

  it('has request bodies from the commands and response shapes from the presenters', async () => {
    const d = await doc();
    const body = d.paths['/api/apps'].post.requestBody.content['application/json'].schema;
    expect(body.properties.name).toBeDefined();
    expect(body.additionalProperties).toBe(false);
    expect(d.paths['/api/apps/{appID}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AppDetail' });
    expect(d.components.schemas.App.required).toContain('access_url');
    expect(d.paths['/api/apps'].post.responses['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('compiles: every response schema is valid JSON Schema 2020-12', async () => {
    const d = await doc();
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'openapi.json', components: d.components });
    let n = 0;
    for (const item of Object.values<any>(d.paths)) {
      for (const op of Object.values<any>(item)) {
        for (const r of Object.values<any>(op.responses)) {
          const schema = r.content?.['application/json']?.schema;
          if (!schema) continue;
          ajv.compile({ ...JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/')) });
          n++;
        }
      }
    }
    expect(n).toBeGreaterThan(150);
    // Every schema was resolved from zod (an unresolved one is a `{ vendor: 'zod' }` stub).
    expect(JSON.stringify(d)).not.toContain('"vendor"');
  });
});
