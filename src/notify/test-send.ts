// The "test" action: a real message to one channel, sent now (not through the outbox), so the operator
// sees the provider's own answer. It is logged like any attempt; a failed test is reported as failed.
import type { Sealer } from '../crypto.js';
import type { Db } from '../store/db.js';
import { addDelivery, getChannel } from '../store/notify.js';
import type { ChannelConfig } from './channel-config.js';
import { newMessageId } from './raise.js';
import { send, type Answer } from './senders.js';

export async function sendTest(d: { db: Db; sealer: Sealer; baseUrl: string }, channelId: number): Promise<Answer & { message_id: string }> {
  const channel = getChannel(d.db, channelId);
  const messageId = newMessageId();
  const config = { type: channel.type, config: d.sealer.openJson(channel.configSealed) } as ChannelConfig;
  const answer = await send(config, {
    messageId,
    event: 'test',
    subject: `svc: test message for channel ${channel.name}`,
    message: 'If you read this, svc can reach this channel. Nothing is wrong.',
    url: `${d.baseUrl.replace(/\/+$/, '')}/settings`,
    at: new Date(),
  });
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  addDelivery(d.db, { channelId, outboxId: null, event: 'test', at, ok: answer.ok, status: answer.status, answer: answer.answer, attempt: 1 });
  return { ...answer, message_id: messageId };
}
