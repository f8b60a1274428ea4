// Managed service endpoints (API.md "Managed services"). Handlers validate, write desired state through
// the store and enqueue; the service reconciler does the engine work. Credentials leave the server only
// through GET .../credentials; no other response and no log line carries them.
import { Hono } from 'hono';
import { z } from 'zod';
import { notFound } from '../errors.js';
import { kindOf } from '../catalog/catalog.js';
import type { Db } from '../store/db.js';
import type { ServiceRow } from '../store/schema/index.js';
import {
  createService, getService, linkedAppNames, listServices, markServiceDeleted, openCredentials, setDesiredRunning,
} from '../store/services.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { body, idParam } from './validate.js';

export const createSchema = z.object({ name: z.string(), type: z.string() }).strict();

/** The API shape of a service record: no credentials, ever. */
export function serviceJson(db: Db, row: ServiceRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    image_ref: row.imageRef,
    status: row.status,
    container_name: row.containerName,
    internal_port: row.internalPort,
    data_dir: row.dataDir,
    error: row.error,
    linked_apps: linkedAppNames(db, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The decrypted connection values of a service (SPEC.md 2.5 fields); the credentials endpoint and the UI's "Show credentials". */
export function serviceCredentials(deps: Pick<ApiDeps, 'sealer'>, row: ServiceRow) {
  const place = { name: row.name, host: row.containerName, dataDir: row.dataDir };
  return kindOf(row.type).credentialFields(openCredentials(deps.sealer, row), place);
}

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
    const input = await body(c, createSchema);
    const row = createService(db, deps.sealer, deps.enqueue, deps.config, { name: input.name, type: input.type });
    deps.log.info('service created', { service: row.name, type: row.type });
    return c.json(serviceJson(db, row), 201);
  });

  r.get('/services/:id', (c) => c.json(serviceJson(db, serviceOf(idParam(c, 'id', 'service')))));

  r.delete('/services/:id', (c) => {
    const row = serviceOf(idParam(c, 'id', 'service'));
    const purge = flag(c.req.query('purge'));
    markServiceDeleted(db, deps.enqueue, row, { purge, force: flag(c.req.query('force')) });
    deps.log.info('service deletion requested', { service: row.name, purge });
    return c.body(null, 204);
  });

  for (const [action, running] of [['stop', false], ['start', true]] as const) {
    r.post(`/services/:id/${action}`, (c) => {
      const row = setDesiredRunning(db, deps.enqueue, serviceOf(idParam(c, 'id', 'service')), running);
      return c.json(serviceJson(db, row), 202);
    });
  }

  r.get('/services/:id/credentials', (c) => {
    const row = serviceOf(idParam(c, 'id', 'service'));
    c.header('cache-control', 'no-store');
    return c.json(serviceCredentials(deps, row));
  });

  return r;
}
