// Notifications (API.md "Notifications"): channels over the notify command (src/desired/notify.ts), the
// test action (a real send, the provider's answer in the body), the delivery log and the outbox.
import { Hono } from 'hono';
import { createChannel, deleteChannel, updateChannel } from '../desired/notify.js';
import { invalid } from '../errors.js';
import { SELECTABLE_EVENTS } from '../notify/events.js';
import { sendTest } from '../notify/test-send.js';
import { getChannel, listChannels, listDeliveries, listOutbox } from '../store/notify.js';
import { channelJson, channelJsonSchema, deliveryJson, deliveryJsonSchema, outboxJson, outboxJsonSchema, testJsonSchema } from '../presenters/notify.js';
import { idParam, jsonBody, restOrigin } from '../http/request.js';
import { publicBaseUrl } from '../http/transport.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';
import { z } from 'zod';
import { createChannelSchema, updateChannelSchema } from '../desired/notify.js';

const op = operations('Notifications');

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw invalid('limit must be an integer from 1 to 1000');
  return n;
}

export function notificationRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();

  r.get('/notifications/events', op({ summary: 'The events a channel can subscribe to', response: z.array(z.string()) }), (c) => c.json(SELECTABLE_EVENTS));
  r.get('/notifications/channels', op({ summary: 'Notification channels (targets redacted)', response: z.array(channelJsonSchema) }), (c) => c.json(listChannels(deps.db).map(channelJson)));
  r.post('/notifications/channels', op({ summary: 'Add a channel (a webhook answer carries its signing secret, once)', body: createChannelSchema, status: 201, response: channelJsonSchema.extend({ secret: z.string().optional() }), errors: { 409: 'conflict: the name is taken' } }), async (c) => {
    c.header('cache-control', 'no-store');
    const { secret, ...row } = createChannel(deps, await jsonBody(c), restOrigin(c));
    return c.json(secret ? { ...channelJson(row), secret } : channelJson(row), 201);
  });
  r.get('/notifications/channels/:id', op({ summary: 'One channel', response: channelJsonSchema }), (c) => c.json(channelJson(getChannel(deps.db, idParam(c, 'id', 'channel')))));
  r.put('/notifications/channels/:id', op({ summary: 'Change a channel', body: updateChannelSchema, response: channelJsonSchema }), async (c) => c.json(channelJson(updateChannel(deps, idParam(c, 'id', 'channel'), await jsonBody(c), restOrigin(c)))));
  r.delete('/notifications/channels/:id', op({ summary: 'Remove a channel', status: 204 }), (c) => {
    deleteChannel(deps, idParam(c, 'id', 'channel'), restOrigin(c));
    return c.body(null, 204);
  });
  r.post('/notifications/channels/:id/test', op({ summary: 'Send a test notification now', response: testJsonSchema }), async (c) => {
    const id = idParam(c, 'id', 'channel');
    return c.json(await sendTest({ db: deps.db, sealer: deps.sealer, baseUrl: publicBaseUrl(c, deps.config) }, id));
  });
  r.get('/notifications/deliveries', op({ summary: 'Recent deliveries, newest first', query: { channel_id: 'a channel id', limit: 'at most this many' }, response: z.array(deliveryJsonSchema), errors: { 400: 'invalid_request: bad channel or limit' } }), (c) => {
    const raw = c.req.query('channel_id');
    const channelId = raw === undefined ? undefined : Number(raw);
    if (channelId !== undefined && !Number.isInteger(channelId)) throw invalid('channel_id must be an integer');
    return c.json(listDeliveries(deps.db, { channelId, limit: limitOf(c.req.query('limit')) }).map(deliveryJson));
  });
  r.get('/notifications/outbox', op({ summary: 'Notifications waiting to be sent', query: { limit: 'at most this many' }, response: z.array(outboxJsonSchema), errors: { 400: 'invalid_request: bad limit' } }), (c) => c.json(listOutbox(deps.db, limitOf(c.req.query('limit'))).map(outboxJson)));
  return r;
}
