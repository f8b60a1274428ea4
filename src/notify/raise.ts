// THE entry point for telling the operator something (API.md "Notifications"). Any part of svc calls
// `raise({ db, bus }, notice)` where the thing happens; it writes one outbox row per enabled channel that
// chose the event, in one transaction (nested inside the caller's when there is one, so the fact and its
// message commit together), then says `notice` on the bus, and the dispatcher (dispatcher.ts) sends them. A `storm` key runs the notice through
// the storm rule (storm.ts) first. Never put a secret in `subject` or `message`: they leave the machine.
import { randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { Bus } from '../events/bus.js';
import { getAlert, listChannels, putAlert } from '../store/notify.js';
import { notifyOutbox } from '../store/schema/index.js';
import { DELIVERY_WINDOW_MS } from './backoff.js';
import type { NotifyEvent } from './events.js';
import { decideAlert, type Signal } from './storm.js';

export interface Notice {
  event: NotifyEvent;
  /** One line naming the app or service and what happened: `web: deploy 12 failed`. */
  subject: string;
  /** A few sentences: the reason, what svc did about it. */
  message: string;
  /** The UI page of the subject (`/apps/web`); SVC_PUBLIC_URL is put in front when sent. */
  link?: string;
  /** Subjects that can flap: `{key: 'app:7:crash', signal: 'fire' | 'resolve'}` (storm.ts). */
  storm?: { key: string; signal: Signal };
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A fresh Standard Webhooks message id. */
export const newMessageId = () => `msg_${randomBytes(12).toString('base64url')}`;

/**
 * Where a notice goes: the outbox in `db`, and `bus`, told `notice` after each raise that queued a message
 * (synchronously, inside the caller's transaction when there is one: a listener should only schedule a look).
 */
export interface NoticeTarget {
  db: Db;
  bus: Bus;
}

/**
 * Queues `notice` for every channel that wants it; returns how many messages were queued (0 when the storm
 * rule held it back or no channel chose the event). Never throws for want of channels.
 */
export function raise(to: NoticeTarget, notice: Notice, nowMs = Date.now()): number {
  const { db } = to;
  const queued = db.transaction(() => {
    if (notice.storm) {
      const row = getAlert(db, notice.storm.key);
      const state = row ? { open: row.open, lastSentAtMs: row.lastSentAt ? Date.parse(row.lastSentAt) : null } : undefined;
      const { send, next } = decideAlert(state, notice.storm.signal, nowMs);
      if (!send) return 0; // the state changes only when something is sent
      putAlert(db, notice.storm.key, next.open, next.lastSentAtMs === null ? null : iso(next.lastSentAtMs), iso(nowMs));
    }
    const channels = listChannels(db).filter((c) => c.enabled && c.events.includes(notice.event));
    for (const c of channels) {
      db.insert(notifyOutbox)
        .values({
          channelId: c.id,
          messageId: newMessageId(),
          event: notice.event,
          subject: notice.subject,
          message: notice.message,
          link: notice.link ?? null,
          nextAt: iso(nowMs),
          expiresAt: iso(nowMs + DELIVERY_WINDOW_MS),
          createdAt: iso(nowMs),
        })
        .run();
    }
    return channels.length;
  });
  if (queued > 0) to.bus.emit('notice');
  return queued;
}
