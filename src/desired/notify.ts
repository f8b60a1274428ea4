// The notification channels command (API.md "Notifications"): create, change and delete channels from the
// REST API, the settings page and the CLI. A channel's config (URLs with tokens, the webhook signing
// secret, the SMTP password) is sealed before it is stored and never shown again; a webhook's signing
// secret is generated when not given and is in the create answer only.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { conflict, invalid } from '../errors.js';
import { CONFIG_SCHEMAS, targetOf, type ChannelConfig } from '../notify/channel-config.js';
import { SELECTABLE_EVENTS } from '../notify/events.js';
import { channelByName, getChannel, type ChannelRow } from '../store/notify.js';
import { CHANNEL_TYPES, notifyChannels, nowIso } from '../store/schema/index.js';
import type { CommandCtx, Origin } from './context.js';
import { nameSchema } from './fields.js';
import { parseInput } from './parse.js';

const eventsSchema = z
  .array(z.enum(SELECTABLE_EVENTS as unknown as [string, ...string[]]))
  .max(SELECTABLE_EVENTS.length)
  .transform((list) => [...new Set(list)]);

export const createChannelSchema = z
  .object({
    name: nameSchema,
    type: z.enum(CHANNEL_TYPES),
    /** Default: every event. */
    events: eventsSchema.optional(),
    enabled: z.boolean().default(true),
    config: z.record(z.string(), z.unknown()),
  })
  .strict();

export const updateChannelSchema = z
  .object({
    name: nameSchema.optional(),
    events: eventsSchema.optional(),
    enabled: z.boolean().optional(),
    /** Replaces the whole config (a webhook without `secret` keeps its secret). */
    config: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function parseConfig(type: ChannelConfig['type'], raw: unknown, keepSecret?: string): ChannelConfig {
  const parsed = CONFIG_SCHEMAS[type].safeParse(raw);
  if (!parsed.success) {
    throw invalid(`invalid ${type} channel config: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`, {
      issues: parsed.error.issues.map((i) => ({ path: ['config', ...i.path], message: i.message })),
    });
  }
  const config = parsed.data as Record<string, unknown>;
  if (type === 'webhook' && !config.secret) config.secret = keepSecret ?? newSecret();
  return { type, config } as ChannelConfig;
}

/** Creates a channel; a webhook's carries its signing `secret` (for the answer only: shown once). */
export function createChannel(ctx: CommandCtx, raw: unknown, origin: Origin): ChannelRow & { secret?: string } {
  const input = parseInput(createChannelSchema, raw);
  const config = parseConfig(input.type, input.config);
  if (channelByName(ctx.db, input.name)) throw conflict(`a channel named ${input.name} already exists`);
  const row = ctx.db
    .insert(notifyChannels)
    .values({
      name: input.name,
      type: input.type,
      events: input.events ?? [...SELECTABLE_EVENTS],
      enabled: input.enabled,
      target: targetOf(config),
      configSealed: ctx.sealer.sealJson(config.config),
    })
    .returning()
    .get();
  ctx.log.info('notification channel created', { channel: row.name, type: row.type, origin });
  const secret = config.type === 'webhook' ? config.config.secret : undefined;
  return secret ? { ...row, secret } : row;
}

export function updateChannel(ctx: CommandCtx, id: number, raw: unknown, origin: Origin): ChannelRow {
  const input = parseInput(updateChannelSchema, raw);
  const row = getChannel(ctx.db, id);
  const patch: Partial<typeof notifyChannels.$inferInsert> = {};
  if (input.name !== undefined && input.name !== row.name) {
    if (channelByName(ctx.db, input.name)) throw conflict(`a channel named ${input.name} already exists`);
    patch.name = input.name;
  }
  if (input.events !== undefined) patch.events = input.events;
  if (input.enabled !== undefined) patch.enabled = input.enabled;
  if (input.config !== undefined) {
    const old = row.type === 'webhook' ? ctx.sealer.openJson<{ secret: string }>(row.configSealed).secret : undefined;
    const config = parseConfig(row.type, input.config, old);
    patch.target = targetOf(config);
    patch.configSealed = ctx.sealer.sealJson(config.config);
  }
  if (Object.keys(patch).length === 0) return row;
  const updated = ctx.db
    .update(notifyChannels)
    .set({ ...patch, updatedAt: nowIso() })
    .where(eq(notifyChannels.id, id))
    .returning()
    .get();
  ctx.log.info('notification channel updated', { channel: updated.name, fields: Object.keys(patch).filter((k) => k !== 'configSealed'), origin });
  return updated;
}

/** Deletes a channel with its waiting messages and its delivery log. */
export function deleteChannel(ctx: CommandCtx, id: number, origin: Origin): void {
  const row = getChannel(ctx.db, id);
  ctx.db.delete(notifyChannels).where(eq(notifyChannels.id, id)).run();
  ctx.log.info('notification channel deleted', { channel: row.name, origin });
}
