// Notifications (API.md "Notifications"): channels over the notify command (src/desired/notify.ts), the
// test action (a real send, the provider's answer in the body), the delivery log and the outbox.
import { Hono } from 'hono';
import { createChannel, deleteChannel, updateChannel } from '../desired/notify.js';
import { invalid } from '../errors.js';
import { SELECTABLE_EVENTS } from '../notify/events.js';
import { sendTest } from '../notify/test-send.js';
import { channelJson, getChannel, listChannels, listDeliveries, listOutbox } from '../store/notify.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { publicBaseUrl } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw invalid('limit must be an integer from 1 to 1000');
  return n;
}

export function notificationRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.get('/notifications/events', (c) => c.json(SELECTABLE_EVENTS));
  r.get('/notifications/channels', (c) => c.json(listChannels(deps.db).map(channelJson)));
  r.post('/notifications/channels', async (c) => {
    c.header('cache-control', 'no-store');
    return c.json(createChannel(deps, await jsonBody(c), restOrigin(c)), 201);
  });
  r.get('/notifications/channels/:id', (c) => c.json(channelJson(getChannel(deps.db, idParam(c, 'id', 'channel')))));
  r.put('/notifications/channels/:id', async (c) => c.json(updateChannel(deps, idParam(c, 'id', 'channel'), await jsonBody(c), restOrigin(c))));
  r.delete('/notifications/channels/:id', (c) => {
    deleteChannel(deps, idParam(c, 'id', 'channel'), restOrigin(c));
    return c.body(null, 204);
  });
  r.post('/notifications/channels/:id/test', async (c) => {
    const id = idParam(c, 'id', 'channel');
    return c.json(await sendTest({ db: deps.db, sealer: deps.sealer, baseUrl: publicBaseUrl(c, deps.config) }, id));
  });
  r.get('/notifications/deliveries', (c) => {
    const raw = c.req.query('channel_id');
    const channelId = raw === undefined ? undefined : Number(raw);
    if (channelId !== undefined && !Number.isInteger(channelId)) throw invalid('channel_id must be an integer');
    return c.json(listDeliveries(deps.db, { channelId, limit: limitOf(c.req.query('limit')) }));
  });
  r.get('/notifications/outbox', (c) => c.json(listOutbox(deps.db, limitOf(c.req.query('limit')))));
  return r;
}
