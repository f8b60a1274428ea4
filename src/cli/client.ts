// The CLI's thin REST client: node's fetch against SVC_URL with SVC_TOKEN as a bearer token. Every
// failure becomes a CliError carrying one human sentence (the API's `error`, or what went wrong reaching
// it), which the entry point prints; no caller ever shows a stack trace.
import { readEnvFile } from '../config.js';
import { resolve } from 'node:path';

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export interface ClientSettings {
  url: string;
  token: string | undefined;
}

/** SVC_URL (default http://127.0.0.1:$SVC_PORT) and SVC_TOKEN, from the environment or `.env`. */
export function clientSettings(env: NodeJS.ProcessEnv = process.env, envFile = resolve('.env')): ClientSettings {
  const file = readEnvFile(envFile);
  const get = (k: string) => env[k] || file[k] || undefined;
  const url = (get('SVC_URL') ?? `http://127.0.0.1:${get('SVC_PORT') ?? '3000'}`).replace(/\/+$/, '');
  return { url, token: get('SVC_TOKEN') };
}

export interface Client {
  readonly url: string;
  /** JSON request; resolves with the parsed body of a 2xx answer, throws CliError otherwise. */
  json<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** The raw response of a 2xx answer (streams, downloads); throws CliError otherwise. */
  raw(path: string, init?: RequestInit): Promise<Response>;
}

export function createClient(s: ClientSettings, fetchImpl: typeof fetch = fetch): Client {
  // `X-Svc-Origin: cli`: the daemon records the CLI as the origin of what it asks for (deploys' `origin`).
  const headers = (extra: HeadersInit = {}) => ({ 'x-svc-origin': 'cli', ...(s.token ? { authorization: `Bearer ${s.token}` } : {}), ...extra });
  async function raw(path: string, init: RequestInit = {}): Promise<Response> {
    let res: Response;
    try {
      res = await fetchImpl(s.url + path, { ...init, headers: headers(init.headers) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach svc at ${s.url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let sentence = `${res.status} ${res.statusText}`;
    try {
      const body = JSON.parse(text) as { error?: string };
      if (body.error) sentence = body.error;
    } catch {
      /* not JSON: keep the status line */
    }
    if (res.status === 401 && !s.token) sentence += ' (set SVC_TOKEN to an API token from POST /api/tokens or the settings page)';
    throw new CliError(sentence);
  }
  return {
    url: s.url,
    raw,
    async json(method, path, body) {
      const res = await raw(path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return (text ? JSON.parse(text) : undefined) as never;
    },
  };
}

/** The app with this name (the API addresses apps by id). */
export async function appByName(client: Client, name: string): Promise<{ id: number; name: string; [k: string]: unknown }> {
  // By name, not from the list: a CI token scoped `deploy:<app>` may not list apps, but may find its own.
  return client.json('GET', `/api/app-names/${encodeURIComponent(name)}`);
}
