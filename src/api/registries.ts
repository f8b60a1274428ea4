// Registry credentials (docs/api.md "Private registries"), thin adapters over src/desired/registries.ts:
// list, add, change, remove, and "test" (a login through the engine: 200 with the registry's answer, or
// 502 `registry_login_failed` with its reason). No answer ever holds the password.
import { Hono, type Context } from 'hono';
import { createRegistry, deleteRegistry, requireRegistry, testRegistry, updateRegistry } from '../desired/registries.js';
import { registryJson, registryJsonSchema } from '../presenters/registries.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { listRegistryCredentials } from '../store/registries.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { registryCreateSchema, registryUpdateSchema } from '../desired/registries.js';

const op = operations('Registries');


export function registryRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const ctx = { db: deps.db, sealer: deps.sealer, log: deps.log };
  const idOf = (c: Context) => idParam(c, 'id', 'registry credential');

  r.get('/registries', op({ summary: 'Private registry credentials (never the password)', response: z.array(registryJsonSchema) }), (c) => c.json(listRegistryCredentials(deps.db).map(registryJson)));
  r.post('/registries', op({ summary: 'Add a registry credential', body: registryCreateSchema, status: 201, response: registryJsonSchema, errors: { 409: 'conflict: one exists for this server' } }), async (c) => c.json(registryJson(createRegistry(ctx, await jsonBody(c), restOrigin(c))), 201));
  r.get('/registries/:id', op({ summary: 'One registry credential', response: registryJsonSchema }), (c) => c.json(registryJson(requireRegistry(ctx, idOf(c)))));
  r.put('/registries/:id', op({ summary: 'Change a registry credential', body: registryUpdateSchema, response: registryJsonSchema }), async (c) => c.json(registryJson(updateRegistry(ctx, idOf(c), await jsonBody(c), restOrigin(c)))));
  r.delete('/registries/:id', op({ summary: 'Remove a registry credential', status: 204 }), (c) => {
    deleteRegistry(ctx, idOf(c), restOrigin(c));
    return c.body(null, 204);
  });
  r.post('/registries/:id/test', op({ summary: 'Log in to the registry through the engine', response: z.object({ ok: z.literal(true), status: z.string().describe("the engine's login status") }).meta({ id: 'RegistryTest' }), errors: { 502: 'registry_login_failed (body: ok false, code, error)', 503: 'engine_unavailable' } }), async (c) => {
    const res = await testRegistry(ctx, deps.runtime, idOf(c));
    return res.ok ? c.json(res) : c.json({ ok: false, code: 'registry_login_failed', error: res.error }, 502);
  });
  return r;
}
