// Sends the outbox (raise.ts writes it). Every `pollMs` while it has work, at once when raise() queued a
// row in this process (onRaised), and otherwise every `quietMs` or when the next retry is due, it takes the pending rows whose time has come and
// sends each at most once at a time (an in-flight set), a few at once; every attempt is logged
// (notify_deliveries) and the row becomes `delivered`, or is retried with backoff (backoff.ts) until it
// expires 24 h after it was raised and ends `failed`. Nothing is kept in memory that a restart needs: a
// daemon killed with messages waiting sends them when it starts again. A message whose send was cut by
// the kill is sent again with the same `webhook-id` (Standard Webhooks receivers drop a repeated id).
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { addDelivery, dueOutbox, getChannel, nextOutboxDue, updateOutbox, type OutboxRow } from '../store/notify.js';
import { dataVersion } from '../store/data-version.js';
import { nextAttemptAt } from './backoff.js';
import { onRaised } from './raise.js';
import type { ChannelConfig } from './channel-config.js';
import { send, type Answer } from './senders.js';
import type { Message } from './payloads.js';

export interface DispatcherDeps {
  db: Db;
  sealer: Sealer;
  log: Logger;
  /** The origin links start with (SVC_PUBLIC_URL, else this host's address and port). */
  baseUrl: () => string;
  now?: () => number;
  /** Between looks while messages are being sent (default 250 ms). */
  pollMs?: number;
  /**
   * Between looks while nothing is due (default QUIET_MS, at least pollMs): raise() in this process wakes it
   * at once and a retry's time is known, so this only covers rows written by another process.
   */
  quietMs?: number;
  concurrency?: number;
}

export interface Dispatcher {
  start(): void;
  /** Look at the outbox now (raise was called in this process). */
  wake(): void;
  /** Stops taking rows and cuts the sends in flight (their rows stay pending, sent again at the next start). */
  stop(): Promise<void>;
}

/** An idle daemon looked at its outbox four times a second; now every 5 s while nothing is due (docs/decisions/0023-idle-footprint.md). */
export const QUIET_MS = 5_000;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The message a row becomes (pure). */
export function messageOf(row: Pick<OutboxRow, 'messageId' | 'event' | 'subject' | 'message' | 'link' | 'createdAt'>, baseUrl: string): Message {
  const url = row.link ? baseUrl.replace(/\/+$/, '') + row.link : null;
  return { messageId: row.messageId, event: row.event, subject: row.subject, message: row.message, url, at: new Date(row.createdAt) };
}

export function createDispatcher(d: DispatcherDeps): Dispatcher {
  const now = d.now ?? Date.now;
  const pollMs = d.pollMs ?? 250;
  const quietMs = d.quietMs ?? Math.max(pollMs, QUIET_MS);
  let offRaised: (() => void) | undefined;
  const concurrency = d.concurrency ?? 4;
  const inFlight = new Map<number, Promise<void>>();
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    if (stopping.signal.aborted) return;
    clearTimeout(timer);
    timer = setTimeout(tick, ms);
    timer.unref?.();
  };

  // After a look that found nothing to send: the database's version then, and when the first pending row
  // (a retry) comes due. Until either moves, a tick skips the outbox query: an idle daemon polled it four
  // times a second for nothing (docs/decisions/0023-idle-footprint.md). raise() writes a row, which moves the version.
  const version = dataVersion(d.db);
  let quiet: { at: string; untilMs: number } | undefined;

  function tick() {
    let next = pollMs;
    try {
      const free = concurrency - inFlight.size;
      const at = version();
      if (free > 0 && !(quiet && quiet.at === at && now() < quiet.untilMs && inFlight.size === 0)) {
        quiet = undefined;
        const rows = dueOutbox(d.db, iso(now()), free + inFlight.size).filter((r) => !inFlight.has(r.id)).slice(0, free);
        if (rows.length === 0 && inFlight.size === 0) {
          const due = nextOutboxDue(d.db);
          quiet = { at, untilMs: due === undefined ? Infinity : Date.parse(due) };
        }
        for (const row of rows) {
          // A fault recording one row (its channel deleted mid-send) is logged, never an unhandled rejection.
          const p = deliver(row)
            .catch((err: unknown) => d.log.error('notification delivery failed', { outbox_id: row.id, error: (err as Error).message }))
            .finally(() => {
              inFlight.delete(row.id);
              schedule(0);
            });
          inFlight.set(row.id, p);
        }
      }
      // Nothing to send and nothing in flight: sleep until the next retry is due, or quietMs at most.
      if (quiet && inFlight.size === 0) next = Math.min(quietMs, Math.max(0, quiet.untilMs - now()));
    } catch (err) {
      d.log.error('notification outbox read failed', { error: (err as Error).message });
    }
    schedule(next);
  }

  async function deliver(row: OutboxRow): Promise<void> {
    let answer: Answer;
    let channel: ReturnType<typeof getChannel>;
    try {
      channel = getChannel(d.db, row.channelId);
    } catch {
      return; // deleted meanwhile: its rows went with it
    }
    if (!channel.enabled) {
      record(row, { ok: false, status: null, answer: 'channel disabled' }, true);
      return;
    }
    try {
      const config = { type: channel.type, config: d.sealer.openJson(channel.configSealed) } as ChannelConfig;
      answer = await send(config, messageOf(row, d.baseUrl()), stopping.signal);
    } catch (err) {
      answer = { ok: false, status: null, answer: `cannot send: ${(err as Error).message}` };
    }
    if (stopping.signal.aborted) return; // cut by the stop: stays pending, sent again at the next start
    record(row, answer, false);
  }

  function record(row: OutboxRow, answer: Answer, final: boolean) {
    const at = now();
    const attempt = row.attempts + 1;
    d.db.transaction(() => {
      addDelivery(d.db, { channelId: row.channelId, outboxId: row.id, event: row.event, at: iso(at), ok: answer.ok, status: answer.status, answer: answer.answer, attempt });
      if (answer.ok) return updateOutbox(d.db, row.id, { status: 'delivered', attempts: attempt, lastAnswer: answer.answer, deliveredAt: iso(at) });
      const next = final ? null : nextAttemptAt(attempt, at, Date.parse(row.expiresAt));
      updateOutbox(d.db, row.id, next === null ? { status: 'failed', attempts: attempt, lastAnswer: answer.answer } : { attempts: attempt, lastAnswer: answer.answer, nextAt: iso(next) });
    });
    if (!answer.ok) d.log.warn('notification not delivered', { channel: row.channelId, event: row.event, attempt, answer: answer.answer });
  }

  return {
    start() {
      offRaised ??= onRaised(d.db, () => schedule(0));
      schedule(0);
    },
    wake: () => schedule(0),
    async stop() {
      offRaised?.();
      stopping.abort();
      clearTimeout(timer);
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}
