import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';

export const CHANNEL_TYPES = ['webhook', 'slack', 'discord', 'ntfy', 'email'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/**
 * Where notifications go (API.md "Notifications"). Everything a channel needs to send (URLs with tokens,
 * the webhook signing secret, SMTP password) is sealed JSON; `target` is a shown summary with no secret
 * (a URL's origin, an SMTP host and recipients).
 */
export const notifyChannels = sqliteTable('notify_channels', {
  id: integer('id').primaryKey(),
  name: text('name').notNull().unique(),
  type: text('type', { enum: CHANNEL_TYPES }).notNull(),
  events: text('events', { mode: 'json' }).$type<string[]>().notNull(),
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  target: text('target').notNull(),
  configSealed: text('config_sealed').notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * One message for one channel, written in the transaction that raised it; the dispatcher sends rows whose
 * `next_at` has come and retries with backoff until `expires_at` (24 h). `message_id` is the Standard
 * Webhooks `webhook-id`: a resend after a crash carries the same one.
 */
export const notifyOutbox = sqliteTable(
  'notify_outbox',
  {
    id: integer('id').primaryKey(),
    channelId: integer('channel_id')
      .notNull()
      .references(() => notifyChannels.id, { onDelete: 'cascade' }),
    messageId: text('message_id').notNull().unique(),
    event: text('event').notNull(),
    subject: text('subject').notNull(),
    message: text('message').notNull(),
    /** A path of the UI (`/apps/web`), made absolute with SVC_PUBLIC_URL when sent. */
    link: text('link'),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAt: text('next_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    lastAnswer: text('last_answer'),
    createdAt: text('created_at').notNull(),
    deliveredAt: text('delivered_at'),
  },
  (t) => [index('notify_outbox_due_idx').on(t.status, t.nextAt)],
);

/** Every attempt to send (and every test send): what the provider answered. */
export const notifyDeliveries = sqliteTable(
  'notify_deliveries',
  {
    id: integer('id').primaryKey(),
    channelId: integer('channel_id')
      .notNull()
      .references(() => notifyChannels.id, { onDelete: 'cascade' }),
    outboxId: integer('outbox_id'),
    event: text('event').notNull(),
    at: text('at').notNull(),
    ok: integer('ok', { mode: 'boolean' }).notNull(),
    /** HTTP status code, or the SMTP reply code. */
    status: integer('status'),
    /** The provider's answer: HTTP status line and body start, SMTP reply, or the connection error. */
    answer: text('answer').notNull(),
    attempt: integer('attempt').notNull(),
  },
  (t) => [index('notify_deliveries_channel_idx').on(t.channelId, t.id)],
);

/** Storm control per subject (`app:7:crash`, `disk`): is an alert open, when was one last sent. */
export const notifyAlerts = sqliteTable('notify_alerts', {
  key: text('key').primaryKey(),
  open: integer('open', { mode: 'boolean' }).notNull(),
  lastSentAt: text('last_sent_at'),
  updatedAt: updatedAt(),
});
