// The pure parts of notifications: the storm rule, retry timing, the disk reading, channel summaries and
// the payload each provider gets.
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { decideAlert, STORM_WINDOW_MS } from '../../../src/notify/storm.js';
import { DELIVERY_WINDOW_MS, nextAttemptAt, retryDelayMs } from '../../../src/notify/backoff.js';
import { diskSignal, usedPercent } from '../../../src/notify/disk.js';
import { redactSecrets, secretsOf, targetOf } from '../../../src/notify/channel-config.js';
import { discordRequest, emailMessage, ntfyRequest, slackRequest, webhookBody, type Message } from '../../../src/notify/payloads.js';
import { messageOf } from '../../../src/notify/dispatcher.js';

const MIN = 60_000;

describe('storm rule', () => {
  it('one alert per open incident, one recovery, and no new alert within 15 minutes of the last', () => {
    let s = decideAlert(undefined, 'fire', 0);
    expect(s.send).toBe(true);
    s = decideAlert(s.next, 'fire', 1 * MIN); // still crashing
    expect(s.send).toBe(false);
    s = decideAlert(s.next, 'resolve', 2 * MIN);
    expect(s).toEqual({ send: true, next: { open: false, lastSentAtMs: 0 } });
    s = decideAlert(s.next, 'resolve', 3 * MIN); // a second recovery says nothing
    expect(s.send).toBe(false);
    s = decideAlert(s.next, 'fire', 10 * MIN); // crashes again 10 min after the alert: held back
    expect(s.send).toBe(false);
    s = decideAlert(s.next, 'resolve', 11 * MIN); // and its recovery too (no alert was sent)
    expect(s.send).toBe(false);
    s = decideAlert(s.next, 'fire', 15 * MIN); // the window has passed: a new alert
    expect(s).toEqual({ send: true, next: { open: true, lastSentAtMs: 15 * MIN } });
    expect(STORM_WINDOW_MS).toBe(15 * MIN);
  });

  it('a recovery without any alert sends nothing and leaves the state as it was', () => {
    const s = decideAlert(undefined, 'resolve', 0);
    expect(s.send).toBe(false);
    expect(s.next).toEqual({ open: false, lastSentAtMs: null });
  });
});

describe('retry timing', () => {
  it('retries quickly at first, then hourly, and gives up after 24 hours', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelayMs)).toEqual([5_000, 15_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3_600_000]);
    expect(nextAttemptAt(1, 1_000, DELIVERY_WINDOW_MS)).toBe(6_000);
    expect(nextAttemptAt(7, DELIVERY_WINDOW_MS - 1_000, DELIVERY_WINDOW_MS)).toBeNull();
    // Counted over the schedule: about 30 attempts in 24 h.
    let t = 0;
    let n = 1;
    for (let at = nextAttemptAt(n, t, DELIVERY_WINDOW_MS); at !== null; at = nextAttemptAt(++n, t, DELIVERY_WINDOW_MS)) t = at;
    expect(n).toBeGreaterThan(20);
    expect(n).toBeLessThan(40);
  });
});

describe('disk', () => {
  it('reads used space as df does and decides with a gap between 85 and 90 %', () => {
    expect(usedPercent({ blocks: 100, bfree: 5, bavail: 0 })).toBe(100); // reserved blocks are not available
    expect(usedPercent({ blocks: 100, bfree: 50, bavail: 50 })).toBe(50);
    expect([91, 90, 88, 84.9].map(diskSignal)).toEqual(['fire', null, null, 'resolve']);
  });
});

describe('channel config', () => {
  it('shows only the origin of a tokened URL and never the SMTP password', () => {
    const slack = { type: 'slack' as const, config: { url: 'https://hooks.slack.com/services/T000/B000/XXXXSECRET' } };
    expect(targetOf(slack)).toBe('https://hooks.slack.com/…');
    const email = { type: 'email' as const, config: { host: 'smtp.example.com', port: 587, security: 'starttls' as const, username: 'u', password: 'hunter22', from: 'svc@example.com', to: ['ops@example.com'] } };
    expect(targetOf(email)).toBe('smtp://smtp.example.com:587 -> ops@example.com');
    expect(redactSecrets('failed for https://hooks.slack.com/services/T000/B000/XXXXSECRET', secretsOf(slack))).toBe('failed for [redacted]');
    expect(redactSecrets('535 auth failed for hunter22', secretsOf(email))).toBe('535 auth failed for [redacted]');
  });
});

describe('payloads', () => {
  const m: Message = { messageId: 'msg_1', event: 'deploy_failed', subject: 'web: deploy 3 failed at pull', message: 'image not found', url: 'https://svc.example.com/deploys/3', at: new Date('2026-11-25T01:00:00Z') };

  it('webhook: the Standard Webhooks shape, verifiable with the reference library', () => {
    const body = webhookBody(m);
    expect(JSON.parse(body)).toEqual({ type: 'deploy_failed', timestamp: '2026-11-25T01:00:00.000Z', data: { event: 'deploy_failed', subject: m.subject, message: m.message, url: m.url } });
    const secret = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
    const now = new Date();
    const sig = new Webhook(secret).sign('msg_1', now, body);
    expect(sig).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': sig };
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'deploy_failed' });
    expect(() => new Webhook(secret).verify(body.replace('pull', 'push'), headers)).toThrow();
  });

  it('slack-compatible and discord: one text naming the app, what happened and the link; discord pings nobody', () => {
    const s = JSON.parse(slackRequest('https://hooks.example/x', m).body);
    expect(s).toEqual({ text: 'web: deploy 3 failed at pull\nimage not found\nhttps://svc.example.com/deploys/3' });
    const d = JSON.parse(discordRequest('https://discord.example/x', { ...m, message: 'x'.repeat(5000) }).body);
    expect(d.content.length).toBe(2000);
    expect(d.allowed_mentions).toEqual({ parse: [] });
  });

  it('ntfy: JSON published to the server root with the topic, a click link and the token as bearer', () => {
    const r = ntfyRequest({ url: 'https://ntfy.example.com/base/alerts-x1', token: 'tk_abcdef' }, m);
    expect(r.url).toBe('https://ntfy.example.com/base/');
    expect(r.headers.authorization).toBe('Bearer tk_abcdef');
    expect(JSON.parse(r.body)).toEqual({ topic: 'alerts-x1', title: m.subject, message: m.message, tags: ['warning'], click: m.url });
  });

  it('email: subject and text', () => {
    const e = emailMessage({ host: 'h', port: 25, security: 'none', from: 'svc@x.org', to: ['a@x.org'] }, m);
    expect(e.subject).toBe('[svc] web: deploy 3 failed at pull');
    expect(e.text).toContain('https://svc.example.com/deploys/3');
  });

  it('a row becomes a message with the public URL in front of its link', () => {
    const msg = messageOf({ messageId: 'msg_2', event: 'app_crashing', subject: 's', message: 'm', link: '/apps/7', createdAt: '2026-11-25T01:00:00Z' }, 'https://svc.example.com/');
    expect(msg.url).toBe('https://svc.example.com/apps/7');
  });
});

describe('channel config shapes', () => {
  it('a URL that does not parse is a field error, not a throw (zod runs refinements after a failed check)', async () => {
    const { CONFIG_SCHEMAS } = await import('../../../src/notify/channel-config.js');
    for (const type of ['webhook', 'slack', 'discord', 'ntfy'] as const) {
      const r = CONFIG_SCHEMAS[type].safeParse({ url: 'not a url' });
      expect(r.success).toBe(false);
    }
  });
});
