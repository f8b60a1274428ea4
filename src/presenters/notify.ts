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
