// The JSON shapes of notification channels (no sealed config, only its summary), deliveries and the outbox.
import { z } from 'zod';
import type { ChannelRow, listDeliveries, listOutbox } from '../store/notify.js';

export const channelJsonSchema = z.object({
  id: z.number().int(), name: z.string(), type: z.string(), events: z.array(z.string()), enabled: z.boolean(), target: z.string(), created_at: z.string(), updated_at: z.string(),
});

/** The channel as the API shows it: no sealed config, only its summary. */
export function channelJson(row: ChannelRow) {
  return { id: row.id, name: row.name, type: row.type, events: row.events, enabled: row.enabled, target: row.target, created_at: row.createdAt, updated_at: row.updatedAt };
}

/** One delivery attempt of the log, with its channel's name. */
export const deliveryJson = ({ d, channel }: ReturnType<typeof listDeliveries>[number]) => ({
  id: d.id,
  at: d.at,
  channel_id: d.channelId,
  channel,
  event: d.event,
  outbox_id: d.outboxId,
  attempt: d.attempt,
  ok: d.ok,
  status: d.status,
  answer: d.answer,
});

/** One message of the outbox (pending, delivered or failed). */
export const outboxJson = (r: ReturnType<typeof listOutbox>[number]) => ({
  id: r.id,
  channel_id: r.channelId,
  message_id: r.messageId,
  event: r.event,
  subject: r.subject,
  status: r.status,
  attempts: r.attempts,
  next_at: r.nextAt,
  expires_at: r.expiresAt,
  last_answer: r.lastAnswer,
  created_at: r.createdAt,
  delivered_at: r.deliveredAt,
});

/** A provider's answer to one attempt (notify/senders.ts Answer). */
const sendAnswer = { ok: z.boolean(), status: z.number().int().nullable().describe('HTTP status or SMTP reply code; null when nothing answered'), answer: z.string() };
export const testJsonSchema = z.object({ ...sendAnswer, message_id: z.string() }).meta({ id: 'NotificationTest' });
export const deliveryJsonSchema = z
  .object({ id: z.number().int(), at: z.string(), channel_id: z.number().int(), channel: z.string(), event: z.string(), outbox_id: z.number().int().nullable(), attempt: z.number().int(), ...sendAnswer })
  .meta({ id: 'NotificationDelivery' });
export const outboxJsonSchema = z
  .object({
    id: z.number().int(),
    channel_id: z.number().int(),
    message_id: z.string(),
    event: z.string(),
    subject: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    next_at: z.string(),
    expires_at: z.string(),
    last_answer: z.string().nullable(),
    created_at: z.string(),
    delivered_at: z.string().nullable(),
  })
  .meta({ id: 'NotificationOutboxEntry' });
