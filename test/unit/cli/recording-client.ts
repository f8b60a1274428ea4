// A CLI Client stand-in for command tests: answers `METHOD /path` (query left out) from a table (a value,
// or a function called per request) and records every call as `METHOD /path {body}`.
import type { Client } from '../../../src/cli/client.js';

export function recordingClient(answers: Record<string, unknown>): { client: Client; calls: string[] } {
  const calls: string[] = [];
  const client: Client = {
    url: 'http://127.0.0.1:9',
    raw: async () => new Response(),
    async json(method: string, path: string, body?: unknown) {
      calls.push(`${method} ${path}${body ? ` ${JSON.stringify(body)}` : ''}`);
      const key = `${method} ${path.replace(/\?.*/, '')}`;
      if (!(key in answers)) throw new Error(`unexpected ${key}`);
      const a = answers[key];
      return (typeof a === 'function' ? a() : a) as never;
    },
  };
  return { client, calls };
}
