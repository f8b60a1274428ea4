// What each channel type needs to send (sealed at rest as one JSON value), its zod shape, and the
// summary the API shows instead (no token, no password, no path of a tokened URL).
import { z } from 'zod';

const httpUrl = z
  .string()
  .trim()
  .max(2048)
  .url()
  .refine((u) => /^https?:$/.test(urlOrNull(u)?.protocol ?? ''), 'must be an http or https URL');

/** `new URL` without the throw (zod runs refinements after a failed check too). */
function urlOrNull(u: string): URL | null {
  try {
    return new URL(u);
  } catch {
    return null;
  }
}

export const webhookConfig = z.object({
  url: httpUrl,
  /** Standard Webhooks secret `whsec_<base64>`; generated when not given. */
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/=]{16,200}$/, 'must be whsec_ followed by base64 of the key')
    .optional(),
}).strict();
export const slackConfig = z.object({ url: httpUrl }).strict();
export const discordConfig = z.object({ url: httpUrl }).strict();
export const ntfyConfig = z
  .object({
    /** The topic URL: `https://ntfy.sh/my-topic` (a topic name is as good as a password on a public server). */
    url: httpUrl.refine((u) => /^\/(.+\/)?[A-Za-z0-9_-]{1,64}$/.test(urlOrNull(u)?.pathname ?? ''), 'must end with the topic name'),
    token: z.string().min(1).max(512).optional(),
  })
  .strict();
const address = z.string().trim().email().max(320);
export const emailConfig = z
  .object({
    host: z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.:-]+$/, 'must be a host name or address'),
    port: z.number().int().min(1).max(65535).default(587),
    /** `tls`: TLS from the first byte (465); `starttls`: required upgrade (587); `none`: plain (a local relay). */
    security: z.enum(['tls', 'starttls', 'none']).default('starttls'),
    username: z.string().max(320).optional(),
    password: z.string().max(1024).optional(),
    from: address,
    to: z.array(address).min(1).max(20),
  })
  .strict();

export type WebhookConfig = z.infer<typeof webhookConfig> & { secret: string };
export type SlackConfig = z.infer<typeof slackConfig>;
export type NtfyConfig = z.infer<typeof ntfyConfig>;
export type EmailConfig = z.infer<typeof emailConfig>;

export const CONFIG_SCHEMAS = { webhook: webhookConfig, slack: slackConfig, discord: discordConfig, ntfy: ntfyConfig, email: emailConfig } as const;

export type ChannelConfig =
  | { type: 'webhook'; config: WebhookConfig }
  | { type: 'slack' | 'discord'; config: SlackConfig }
  | { type: 'ntfy'; config: NtfyConfig }
  | { type: 'email'; config: EmailConfig };

/** Pure: the shown summary of a channel's config, never a secret (URL path, query, user info are cut). */
export function targetOf(c: ChannelConfig): string {
  if (c.type === 'email') return `smtp://${c.config.host}:${c.config.port} -> ${c.config.to.join(', ')}`;
  return `${new URL(c.config.url).origin}/…`;
}

/** The values that must never appear in what svc stores or shows of an answer. */
export function secretsOf(c: ChannelConfig): string[] {
  if (c.type === 'email') return [c.config.password ?? ''].filter((s) => s.length >= 4);
  const u = new URL(c.config.url);
  const out = [c.config.url, u.pathname + u.search, u.username, u.password];
  if (c.type === 'webhook') out.push(c.config.secret);
  if (c.type === 'ntfy' && c.config.token) out.push(c.config.token);
  return out.filter((s) => s.length >= 4);
}

/** Replaces every secret in `text` (an error or a provider's answer can echo the URL). */
export function redactSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out;
}
