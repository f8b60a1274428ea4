// Managed service endpoints (API.md "Managed services"): adapters over the services command
// (src/desired/services.ts); the service reconciler does the engine work. Credentials leave the server only
// through GET .../credentials; no other response and no log line carries them.
import { Hono } from 'hono';
import { notFound } from '../errors.js';
import { createService, deleteService, setServiceRunning } from '../desired/services.js';
import { getService, listServices, serviceCredentials } from '../store/services.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { serviceEventJson, serviceJson, upgradeJson } from '../presenters/services.js';
import { requestUpgradeEnd, upgradeService } from '../desired/service-upgrades.js';
import { serviceEventsOf, upgradesOf } from '../store/service-upgrades.js';

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

  r.get('/services', (c) => c.json(listServices(db).map((s) => serviceJson(db, s))));

  r.post('/services', async (c) => {
    const row = createService(deps, await jsonBody(c), restOrigin(c));
    return c.json(serviceJson(db, row), 201);
  });

  r.get('/services/:id', (c) => c.json(serviceJson(db, serviceOf(idParam(c, 'id', 'service')))));

  r.delete('/services/:id', (c) => {
    const opts = { purge: flag(c.req.query('purge')), force: flag(c.req.query('force')) };
    deleteService(deps, idParam(c, 'id', 'service'), opts, restOrigin(c));
    return c.body(null, 204);
  });

  for (const [action, running] of [['stop', false], ['start', true]] as const) {
    r.post(`/services/:id/${action}`, (c) => {
      const row = setServiceRunning(deps, idParam(c, 'id', 'service'), running, restOrigin(c));
      return c.json(serviceJson(db, row), 202);
    });
  }

  r.post('/services/:id/upgrade', async (c) => {
    const up = upgradeService(deps, idParam(c, 'id', 'service'), await jsonBody(c), restOrigin(c));
    return c.json(upgradeJson(up), 202);
  });
  for (const what of ['revert', 'confirm'] as const) {
    r.post(`/services/:id/upgrade/${what}`, (c) => c.json(upgradeJson(requestUpgradeEnd(deps, idParam(c, 'id', 'service'), what, restOrigin(c))), 202));
  }
  r.get('/services/:id/upgrades', (c) => c.json(upgradesOf(db, serviceOf(idParam(c, 'id', 'service')).id).map(upgradeJson)));
  r.get('/services/:id/events', (c) => c.json(serviceEventsOf(db, serviceOf(idParam(c, 'id', 'service')).id).map(serviceEventJson)));

  r.get('/services/:id/credentials', (c) => {
    const row = serviceOf(idParam(c, 'id', 'service'));
    c.header('cache-control', 'no-store');
    return c.json(serviceCredentials(deps.sealer, row));
  });

  return r;
}
