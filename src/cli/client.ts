// The CLI's thin REST client: node's fetch against SVC_URL with SVC_TOKEN as a bearer token. Every
// failure becomes a CliError carrying one human sentence (the API's `error`, or what went wrong reaching
// it), which the entry point prints; no caller ever shows a stack trace.
import { readEnvFile } from '../config.js';
import { resolve } from 'node:path';
import { loginFilePath, readLoginFile, type LoginFile } from './login-file.js';

export class CliError extends Error {
  /** `apiCode`: the API's machine code of the error (`totp_required`, ...), when the daemon answered one. */
  constructor(message: string, readonly exitCode = 1, readonly apiCode?: string, readonly status?: number) {
    super(message);
  }
}

export interface ClientSettings {
  url: string;
  token: string | undefined;
}

/** Where a setting came from: the environment, `.env` in the working directory, `svc login`'s file, or the default. */
export type SettingSource = 'environment' | '.env' | 'login' | 'default';

export interface ResolvedSettings extends ClientSettings {
  from: { url: SettingSource; token: SettingSource | undefined };
}

const trimUrl = (u: string) => u.replace(/\/+$/, '');

/**
 * Pure: the URL and token a command uses. Each of SVC_URL and SVC_TOKEN comes from the environment, else
 * `.env`, else the login file; the URL's default is http://127.0.0.1:$SVC_PORT. The login file's token
 * goes only to the login file's URL: a SVC_URL naming another daemon never receives it.
 */
export function resolveSettings(env: NodeJS.ProcessEnv, dotenv: Record<string, string>, login: LoginFile | undefined): ResolvedSettings {
  const pick = (k: string): [string, SettingSource] | undefined =>
    env[k] ? [env[k]!, 'environment'] : dotenv[k] ? [dotenv[k], '.env'] : undefined;
  const url = pick('SVC_URL') ?? (login ? [login.url, 'login'] : [`http://127.0.0.1:${env.SVC_PORT || dotenv.SVC_PORT || '3000'}`, 'default']);
  const token = pick('SVC_TOKEN') ?? (login && trimUrl(login.url) === trimUrl(url[0]) ? [login.token, 'login'] : undefined);
  return { url: trimUrl(url[0]), token: token?.[0], from: { url: url[1], token: token?.[1] } };
}

/** The settings with their sources, from the process's environment, `.env` and the login file. */
export function settingsOf(env: NodeJS.ProcessEnv = process.env, envFile = resolve('.env')): ResolvedSettings {
  const login = readLoginFile(loginFilePath(env));
  if (login instanceof Error) throw new CliError(login.message);
  return resolveSettings(env, readEnvFile(envFile), login);
}

/** SVC_URL (default http://127.0.0.1:$SVC_PORT) and SVC_TOKEN: the environment, `.env`, then `svc login`'s file. */
export function clientSettings(env: NodeJS.ProcessEnv = process.env, envFile = resolve('.env')): ClientSettings {
  const { url, token } = settingsOf(env, envFile);
  return { url, token };
}

export interface Client {
  readonly url: string;
  /** JSON request; resolves with the parsed body of a 2xx answer, throws CliError otherwise. */
  json<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** The raw response of a 2xx answer (streams, downloads); throws CliError otherwise. */
  raw(path: string, init?: RequestInit): Promise<Response>;
  /** The headers every request carries (token, origin): for the WebSocket of `svc exec`. */
  headers?(): Record<string, string>;
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
    let code: string | undefined;
    try {
      const body = JSON.parse(text) as { error?: string; code?: string };
      if (body.error) sentence = body.error;
      code = body.code;
    } catch {
      /* not JSON: keep the status line */
    }
    if (res.status === 401 && !s.token) sentence += ' (run svc login, or set SVC_TOKEN to an API token from the settings page)';
    throw new CliError(sentence, 1, code, res.status);
  }
  return {
    url: s.url,
    raw,
    headers: () => headers() as Record<string, string>,
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
