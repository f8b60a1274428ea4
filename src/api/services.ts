// Managed service endpoints (API.md "Managed services"): adapters over the services command
// (src/desired/services.ts); the service reconciler does the engine work. Credentials leave the server only
// through GET .../credentials; no other response and no log line carries them.
import { Hono } from 'hono';
import { notFound } from '../errors.js';
import { createService, deleteService, setServiceRunning } from '../desired/services.js';
import { getService, listServices, serviceCredentials } from '../store/services.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { serviceCredentialsJsonSchema, serviceEventJson, serviceEventJsonSchema, serviceJson, serviceJsonSchema, upgradeJson, upgradeJsonSchema } from '../presenters/services.js';
import { requestUpgradeEnd, upgradeSchema, upgradeService } from '../desired/service-upgrades.js';
import { serviceEventsOf, upgradesOf } from '../store/service-upgrades.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { createServiceSchema } from '../desired/services.js';

const op = operations('Services');

/** `?flag=true` (also `1`, `yes`) as a boolean. */
const flag = (v: string | undefined) => v === 'true' || v === '1' || v === 'yes';

export function serviceRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  const { db } = deps;
  const serviceOf = (id: number) => {
    const row = getService(db, id);
    if (!row) throw notFound('service');
    return row;
  };

  r.get('/services', op({ summary: 'List managed services', response: z.array(serviceJsonSchema) }), (c) => c.json(listServices(db).map((s) => serviceJson(db, s))));

  r.post('/services', op({ summary: 'Create a managed service (postgres, mysql, redis, garage)', body: createServiceSchema, status: 201, response: serviceJsonSchema, errors: { 409: 'conflict: the name is taken' } }), async (c) => {
    const row = createService(deps, await jsonBody(c), restOrigin(c));
    return c.json(serviceJson(db, row), 201);
  });

  r.get('/services/:id', op({ summary: 'One service', response: serviceJsonSchema }), (c) => c.json(serviceJson(db, serviceOf(idParam(c, 'id', 'service')))));

  r.delete('/services/:id', op({ summary: 'Delete a service', query: { purge: 'true: remove its data directory too', force: 'true: even while apps link it' }, status: 204, errors: { 409: 'conflict: apps still link it (unless force)' } }), (c) => {
    const opts = { purge: flag(c.req.query('purge')), force: flag(c.req.query('force')) };
    deleteService(deps, idParam(c, 'id', 'service'), opts, restOrigin(c));
    return c.body(null, 204);
  });

  for (const [action, running] of [['stop', false], ['start', true]] as const) {
    r.post(`/services/:id/${action}`, op({ summary: `${action === 'stop' ? 'Stop' : 'Start'} a service`, status: 202, response: serviceJsonSchema }), (c) => {
      const row = setServiceRunning(deps, idParam(c, 'id', 'service'), running, restOrigin(c));
      return c.json(serviceJson(db, row), 202);
    });
  }

  r.post('/services/:id/upgrade', op({ summary: 'Upgrade a service to another major version, guarded (backup, move, verify, switch)', body: upgradeSchema, status: 202, response: upgradeJsonSchema, errors: { 409: 'an upgrade is running or keeps an old version, the service is not active, or its type has one version' } }), async (c) => {
    const up = upgradeService(deps, idParam(c, 'id', 'service'), await jsonBody(c), restOrigin(c));
    return c.json(upgradeJson(up), 202);
  });
  for (const what of ['revert', 'confirm'] as const) {
    r.post(`/services/:id/upgrade/${what}`, op({ summary: what === 'revert' ? 'Return to the version kept before the upgrade (data written since is lost)' : 'Drop the version kept before the upgrade', status: 202, response: upgradeJsonSchema, errors: { 409: 'no upgrade to end' } }), (c) => c.json(upgradeJson(requestUpgradeEnd(deps, idParam(c, 'id', 'service'), what, restOrigin(c))), 202));
  }
  r.get('/services/:id/upgrades', op({ summary: "The service's upgrades, newest first", response: z.array(upgradeJsonSchema) }), (c) => c.json(upgradesOf(db, serviceOf(idParam(c, 'id', 'service')).id).map(upgradeJson)));
  r.get('/services/:id/events', op({ summary: "The service's events", response: z.array(serviceEventJsonSchema) }), (c) => c.json(serviceEventsOf(db, serviceOf(idParam(c, 'id', 'service')).id).map(serviceEventJson)));

  r.get('/services/:id/credentials', op({ summary: "The service's credentials and connection URL (audited)", response: serviceCredentialsJsonSchema }), (c) => {
    const row = serviceOf(idParam(c, 'id', 'service'));
    c.header('cache-control', 'no-store');
    return c.json(serviceCredentials(deps.sealer, row));
  });

  return r;
}
