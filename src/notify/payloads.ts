// Pure: the request each provider expects for one message. Texts are cut to what the provider accepts;
// the signature (webhook) and the SMTP exchange are the senders' (senders.ts).
import type { EmailConfig, NtfyConfig } from './channel-config.js';

export interface Message {
  messageId: string;
  event: string;
  subject: string;
  message: string;
  /** Absolute URL of the subject's page, or null. */
  url: string | null;
  /** When the thing happened (the outbox row's creation). */
  at: Date;
}

export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const cut = (s: string, max: number) => (s.length <= max ? s : s.slice(0, max - 1) + '…');
const lines = (m: Message) => [m.subject, m.message, m.url].filter(Boolean).join('\n');

/** Standard Webhooks payload: `{type, timestamp, data}` (the spec's recommended shape). */
export function webhookBody(m: Message): string {
  return JSON.stringify({
    type: m.event,
    timestamp: m.at.toISOString(),
    data: { event: m.event, subject: m.subject, message: m.message, url: m.url },
  });
}

/** Slack incoming webhook; Mattermost and Rocket.Chat take the same `text` field. */
export function slackRequest(url: string, m: Message): HttpRequest {
  return { url, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: cut(lines(m), 3000) }) };
}

/** Discord webhook: `content` up to 2000 characters, and no message may ping anyone. */
export function discordRequest(url: string, m: Message): HttpRequest {
  return { url, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: cut(lines(m), 2000), allowed_mentions: { parse: [] } }) };
}

/** ntfy: JSON publishing to the server root (titles need no header encoding), click opens the page. */
export function ntfyRequest(c: NtfyConfig, m: Message): HttpRequest {
  const u = new URL(c.url);
  const parts = u.pathname.split('/');
  const topic = parts.pop()!;
  const root = `${u.origin}${parts.join('/')}/`;
  const body: Record<string, unknown> = { topic, title: cut(m.subject, 250), message: cut(m.message, 3500), tags: [tagOf(m.event)] };
  if (m.url) body.click = m.url;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (c.token) headers.authorization = `Bearer ${c.token}`;
  return { url: root, headers, body: JSON.stringify(body) };
}

function tagOf(event: string): string {
  if (/recovered|_ok$/.test(event)) return 'white_check_mark';
  if (event === 'test') return 'bell';
  return 'warning';
}

export function emailMessage(c: EmailConfig, m: Message) {
  return { from: c.from, to: c.to, subject: cut(`[svc] ${m.subject}`, 200), text: `${lines(m)}\n\nevent: ${m.event}\nmessage id: ${m.messageId}\n` };
}
