// `svc notify list | add NAME | test NAME | rm NAME | log` (API.md "Notifications"): thin calls of
// /api/notifications. A channel's config comes from flags (`--url`) or, for email and anything with a
// password, from a JSON file (`--config FILE`), so no password sits in the shell's history or `ps`.
import { readFileSync } from 'node:fs';
import { CliError, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

interface ChannelJson {
  id: number;
  name: string;
  type: string;
  events: string[];
  enabled: boolean;
  target: string;
  secret?: string;
}

export interface NotifyOptions {
  action: string;
  name?: string;
  type?: string;
  url?: string;
  config?: string;
  events?: string;
  limit?: string;
  json?: boolean;
}

async function channelId(client: Client, name: string): Promise<number> {
  const found = (await client.json<ChannelJson[]>('GET', '/api/notifications/channels')).find((c) => c.name === name);
  if (!found) throw new CliError(`no notification channel named ${name}`);
  return found.id;
}

function readConfig(o: NotifyOptions): unknown {
  if (o.config) {
    try {
      return JSON.parse(readFileSync(o.config, 'utf8'));
    } catch (err) {
      throw new CliError(`cannot read ${o.config} as JSON: ${(err as Error).message}`, 2);
    }
  }
  if (o.url) return { url: o.url };
  throw new CliError('give --url URL or --config FILE (a JSON object: API.md "Notifications")', 2);
}

export async function notifyCommand(client: Client, o: NotifyOptions): Promise<number> {
  const needName = () => {
    if (!o.name) throw new CliError(`usage: svc notify ${o.action} NAME`, 2);
    return o.name;
  };
  switch (o.action) {
    case 'list': {
      const list = await client.json<ChannelJson[]>('GET', '/api/notifications/channels');
      if (o.json) return printJson(list), 0;
      if (list.length === 0) process.stdout.write('no notification channels\n');
      else process.stdout.write(formatTable([['NAME', 'TYPE', 'TARGET', 'ENABLED', 'EVENTS'], ...list.map((c) => [c.name, c.type, c.target, c.enabled ? 'yes' : 'no', c.events.join(',')])]));
      return 0;
    }
    case 'add': {
      const name = needName();
      if (!o.type) throw new CliError('--type is required: webhook, slack, discord, ntfy or email', 2);
      const body: Record<string, unknown> = { name, type: o.type, config: readConfig(o) };
      if (o.events) body.events = o.events.split(',').map((e) => e.trim()).filter(Boolean);
      const made = await client.json<ChannelJson>('POST', '/api/notifications/channels', body);
      process.stdout.write(`channel ${made.name} added (${made.target})\n`);
      if (made.secret) process.stdout.write(`signing secret (shown once): ${made.secret}\n`);
      return 0;
    }
    case 'test': {
      const id = await channelId(client, needName());
      const a = await client.json<{ ok: boolean; answer: string }>('POST', `/api/notifications/channels/${id}/test`);
      process.stdout.write(`${a.ok ? 'delivered' : 'not delivered'}: ${a.answer}\n`);
      return a.ok ? 0 : 1;
    }
    case 'rm': {
      const id = await channelId(client, needName());
      await client.json('DELETE', `/api/notifications/channels/${id}`);
      process.stdout.write(`channel ${o.name} removed\n`);
      return 0;
    }
    case 'log': {
      const q = o.limit ? `?limit=${encodeURIComponent(o.limit)}` : '';
      const log = await client.json<{ at: string; channel: string; event: string; attempt: number; answer: string }[]>('GET', `/api/notifications/deliveries${q}`);
      if (o.json) return printJson(log), 0;
      if (log.length === 0) process.stdout.write('nothing sent yet\n');
      else process.stdout.write(formatTable([['TIME', 'CHANNEL', 'EVENT', 'ATTEMPT', 'ANSWER'], ...log.map((d) => [d.at, d.channel, d.event, String(d.attempt), d.answer])]));
      return 0;
    }
  }
  throw new CliError(`unknown notify action "${o.action}"; use list, add, test, rm or log`, 2);
}
