// Registry credentials (docs/api.md "Private registries"), thin adapters over src/desired/registries.ts:
// list, add, change, remove, and "test" (a login through the engine: 200 with the registry's answer, or
// 502 `registry_login_failed` with its reason). No answer ever holds the password.
import { Hono, type Context } from 'hono';
import { createRegistry, deleteRegistry, registryJson, requireRegistry, testRegistry, updateRegistry } from '../desired/registries.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { listRegistryCredentials } from '../store/registries.js';
import type { ApiDeps, ApiEnv } from './deps.js';

export function registryRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const ctx = { db: deps.db, sealer: deps.sealer, log: deps.log };
  const idOf = (c: Context) => idParam(c, 'id', 'registry credential');

  r.get('/registries', (c) => c.json(listRegistryCredentials(deps.db).map(registryJson)));
  r.post('/registries', async (c) => c.json(registryJson(createRegistry(ctx, await jsonBody(c), restOrigin(c))), 201));
  r.get('/registries/:id', (c) => c.json(registryJson(requireRegistry(ctx, idOf(c)))));
  r.put('/registries/:id', async (c) => c.json(registryJson(updateRegistry(ctx, idOf(c), await jsonBody(c), restOrigin(c)))));
  r.delete('/registries/:id', (c) => {
    deleteRegistry(ctx, idOf(c), restOrigin(c));
    return c.body(null, 204);
  });
  r.post('/registries/:id/test', async (c) => {
    const res = await testRegistry(ctx, deps.runtime, idOf(c));
    return res.ok ? c.json(res) : c.json({ ok: false, code: 'registry_login_failed', error: res.error }, 502);
  });
  return r;
}
