// Effects: one message out to one provider, and what it answered. HTTP channels send with a 10 s timeout
// and follow no redirect (a redirect is an answer to show, not a place to send a signed body); email goes
// through nodemailer. A 2xx (or an SMTP 2xx reply) is delivered; anything else is retried by the dispatcher.
import { Webhook } from 'standardwebhooks';
import { redactSecrets, secretsOf, type ChannelConfig, type EmailConfig } from './channel-config.js';
import { discordRequest, emailMessage, ntfyRequest, slackRequest, webhookBody, type HttpRequest, type Message } from './payloads.js';

export interface Answer {
  ok: boolean;
  /** HTTP status or SMTP reply code; null when nothing answered. */
  status: number | null;
  /** What the provider said (status line and the start of its body, the SMTP reply, or the error). */
  answer: string;
}

const TIMEOUT_MS = 10_000;

/** Sends `m`; `signal` cuts the send (the daemon stops). Never throws: a failure is an answer. */
export async function send(c: ChannelConfig, m: Message, signal?: AbortSignal): Promise<Answer> {
  const answer = await sendRaw(c, m, signal ?? new AbortController().signal).catch((err: unknown) => failure(err));
  return { ...answer, answer: redactSecrets(answer.answer, secretsOf(c)).slice(0, 500) };
}

function sendRaw(c: ChannelConfig, m: Message, signal: AbortSignal): Promise<Answer> {
  switch (c.type) {
    case 'webhook': {
      const body = webhookBody(m);
      const at = new Date();
      const signature = new Webhook(c.config.secret).sign(m.messageId, at, body);
      const headers = {
        'content-type': 'application/json',
        'webhook-id': m.messageId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      };
      return post({ url: c.config.url, headers, body }, signal);
    }
    case 'slack':
      return post(slackRequest(c.config.url, m), signal);
    case 'discord':
      return post(discordRequest(c.config.url, m), signal);
    case 'ntfy':
      return post(ntfyRequest(c.config, m), signal);
    case 'email':
      return mail(c.config, m, signal);
  }
}

async function post(r: HttpRequest, signal: AbortSignal): Promise<Answer> {
  const res = await fetch(r.url, {
    method: 'POST',
    headers: { 'user-agent': 'svc-notify/1', ...r.headers },
    body: r.body,
    redirect: 'manual',
    signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
  });
  const text = (await res.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 300);
  return { ok: res.status >= 200 && res.status < 300, status: res.status, answer: `HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}${text ? ': ' + text : ''}` };
}

async function mail(c: EmailConfig, m: Message, signal: AbortSignal): Promise<Answer> {
  // Loaded at the first mail (~14 MiB a daemon without an email channel never needs).
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    host: c.host,
    port: c.port,
    secure: c.security === 'tls',
    requireTLS: c.security === 'starttls',
    ignoreTLS: c.security === 'none',
    auth: c.username ? { user: c.username, pass: c.password ?? '' } : undefined,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  const cut = () => transport.close();
  signal.addEventListener('abort', cut, { once: true });
  try {
    const info = await transport.sendMail(emailMessage(c, m));
    const code = Number(/^(\d{3})/.exec(info.response ?? '')?.[1] ?? 250);
    return { ok: info.rejected.length === 0, status: code, answer: info.rejected.length ? `${info.response}; rejected: ${info.rejected.join(', ')}` : info.response };
  } finally {
    signal.removeEventListener('abort', cut);
    transport.close();
  }
}

function failure(err: unknown): Answer {
  const e = err as Error & { responseCode?: number; response?: string; cause?: { code?: string; message?: string } };
  if (e.responseCode) return { ok: false, status: e.responseCode, answer: e.response ?? e.message };
  const cause = e.cause?.code ?? e.cause?.message;
  return { ok: false, status: null, answer: cause ? `${e.message} (${cause})` : String(e.message ?? err) };
}
