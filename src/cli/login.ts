// `svc login [URL]`, `svc logout`, `svc whoami`: the CLI logged in like gh or heroku. login asks for the
// user, the password and, when the account has a second factor, its code (POST /api/auth/login answers 401
// `totp_required` for those), then creates an API token named `svc-cli@<hostname>` with the session and
// keeps URL and token in the login file (login-file.ts); the session is logged out at once, only the token
// stays. logout revokes that token (DELETE /api/tokens/{id}) and deletes the file.
import { hostname } from 'node:os';
import { CliError, createClient, settingsOf, type ResolvedSettings } from './client.js';
import { loginFilePath, readLoginFile, removeLoginFile, writeLoginFile } from './login-file.js';
import type { Prompter } from './prompt.js';

type Write = (s: string) => void;
const stdout: Write = (s) => void process.stdout.write(s);

/** The token's name: one per host and user, so the token list says which machine holds which token. */
export const tokenName = (host = hostname()) => `svc-cli@${host}`;

/**
 * Scopes of the CLI's token: `admin`, which means "everything my role allows" for every role (it never
 * exceeds the role, docs/api.md "API tokens"); `read` would not even let the token revoke itself at logout.
 */
export const CLI_TOKEN_SCOPES = ['admin'];

/** Pure: the URL `svc login` logs in to: the argument, else SVC_URL, else the last login's, else the default. */
export function loginUrl(arg: string | undefined, current: ResolvedSettings): string {
  const url = (arg ?? current.url).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+/.test(url)) throw new CliError(`"${url}" is not an http:// or https:// URL`, 2);
  return url;
}

interface UserJson {
  id: number;
  username: string;
  role: string;
  apps?: string[] | null;
}

async function post(url: string, path: string, body: unknown, cookie?: string): Promise<Response> {
  try {
    // JSON content type: the daemon's CSRF rule for the login form and cookie-authenticated writes.
    return await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-origin': 'cli', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`cannot reach svc at ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

async function failure(res: Response): Promise<{ error: string; code?: string }> {
  const text = await res.text().catch(() => '');
  try {
    const b = JSON.parse(text) as { error?: string; code?: string };
    return { error: b.error ?? `${res.status} ${res.statusText}`, code: b.code };
  } catch {
    return { error: `${res.status} ${res.statusText}` };
  }
}

/** Logs in with a password (and a second factor when asked for one); the session cookie and the user. */
async function passwordLogin(url: string, prompt: Prompter): Promise<{ cookie: string; user: UserJson }> {
  const username = (await prompt.ask('User (e-mail or name): ')).trim();
  const password = await prompt.secret('Password: ');
  let body: Record<string, string> = { username, password };
  let res = await post(url, '/api/auth/login', body);
  if (res.status === 401) {
    const f = await failure(res);
    if (f.code !== 'totp_required') throw new CliError(f.error);
    const code = (await prompt.ask('Authentication code (or a recovery code): ')).trim();
    // Six digits is an authenticator code; anything else is taken for a recovery code.
    body = { ...body, ...(/^\d{6}$/.test(code.replace(/\s/g, '')) ? { totp: code.replace(/\s/g, '') } : { recovery_code: code }) };
    res = await post(url, '/api/auth/login', body);
  }
  if (!res.ok) throw new CliError((await failure(res)).error);
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  if (!cookie) throw new CliError(`${url} answered the login without a session cookie; is it svc?`);
  return { cookie, user: ((await res.json()) as { user: UserJson }).user };
}

/** Creates the CLI's token with the session; a token of the same name (an earlier login from this host) is replaced. */
async function createCliToken(url: string, cookie: string, name: string): Promise<{ id: number; token: string }> {
  const body = { name, scopes: CLI_TOKEN_SCOPES };
  let res = await post(url, '/api/tokens', body, cookie);
  if (res.status === 409) {
    const session = createClient({ url, token: undefined }, (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie } }));
    const old = (await session.json<{ id: number; name: string }[]>('GET', '/api/tokens')).find((t) => t.name === name);
    if (old) await session.raw(`/api/tokens/${old.id}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    res = await post(url, '/api/tokens', body, cookie);
  }
  if (res.status !== 201) throw new CliError(`creating the API token failed: ${(await failure(res)).error}`);
  return (await res.json()) as { id: number; token: string };
}

export async function loginCommand(o: { url?: string; prompt: Prompter; env?: NodeJS.ProcessEnv; write?: Write }): Promise<number> {
  const env = o.env ?? process.env;
  const write = o.write ?? stdout;
  const path = loginFilePath(env);
  if (!path) throw new CliError('neither HOME nor XDG_CONFIG_HOME is set: nowhere to keep the login');
  const url = loginUrl(o.url, settingsOfIgnoringBrokenFile(env));
  try {
    const { cookie, user } = await passwordLogin(url, o.prompt);
    const name = tokenName();
    const created = await createCliToken(url, cookie, name);
    // The session was only the way to the token: end it (a failure here leaves a session that expires by itself).
    await post(url, '/api/auth/logout', {}, cookie).catch(() => undefined);
    const previous = readLoginFile(path);
    writeLoginFile(path, { url, token: created.token, token_id: created.id, user: user.username });
    // The previous login's token (another daemon, another user) is revoked, as svc logout would (best effort).
    if (previous && !(previous instanceof Error) && !(previous.url === url && previous.token_id === created.id)) await revoke(previous.url, previous.token, previous.token_id).catch(() => undefined);
    write(`logged in to ${url} as ${user.username} (${user.role}); token ${name} kept in ${path}\n`);
    if (env.SVC_TOKEN) write('note: SVC_TOKEN is set in the environment and wins over the login (unset it to use this one)\n');
    return 0;
  } finally {
    o.prompt.close();
  }
}

/** The current settings, a login file that cannot be read counting as none (login replaces it). */
function settingsOfIgnoringBrokenFile(env: NodeJS.ProcessEnv): ResolvedSettings {
  try {
    return settingsOf(env);
  } catch {
    return settingsOf({ ...env, HOME: undefined, XDG_CONFIG_HOME: undefined });
  }
}

async function revoke(url: string, token: string, id: number): Promise<void> {
  await createClient({ url, token }).raw(`/api/tokens/${id}`, { method: 'DELETE' });
}

export async function logoutCommand(o: { env?: NodeJS.ProcessEnv; write?: Write } = {}): Promise<number> {
  const env = o.env ?? process.env;
  const write = o.write ?? stdout;
  const path = loginFilePath(env);
  const file = readLoginFile(path);
  if (!file) {
    write('not logged in (no login file)\n');
    return 0;
  }
  if (file instanceof Error) {
    removeLoginFile(path!);
    write(`removed ${path} (it could not be read, so no token was revoked: delete it on the settings page)\n`);
    return 1;
  }
  let problem: string | undefined;
  try {
    await revoke(file.url, file.token, file.token_id);
  } catch (err) {
    const e = err as CliError;
    // Already revoked, expired or deleted on the server: nothing left to revoke.
    if (e.status !== 401 && e.status !== 404) problem = e.message;
  }
  removeLoginFile(path!);
  if (problem) {
    write(`removed ${path}, but the token could not be revoked: ${problem}; delete it on the settings page of ${file.url}\n`);
    return 1;
  }
  write(`logged out of ${file.url}: token revoked, ${path} removed\n`);
  return 0;
}

const SOURCE_WORDS = { environment: 'the environment', '.env': '.env', login: 'svc login', default: 'the default' } as const;

export async function whoamiCommand(o: { json: boolean; env?: NodeJS.ProcessEnv; write?: Write }): Promise<number> {
  const write = o.write ?? stdout;
  const s = settingsOf(o.env ?? process.env);
  if (!s.token) throw new CliError(`not logged in to ${s.url}: run svc login${s.from.url === 'login' ? '' : ` ${s.url}`}, or set SVC_TOKEN`);
  const me = await createClient(s).json<{ user: UserJson }>('GET', '/api/auth/me');
  if (o.json) {
    write(JSON.stringify(me, null, 2) + '\n');
    return 0;
  }
  const apps = me.user.apps?.length ? ` (apps: ${me.user.apps.join(', ')})` : '';
  write(`${me.user.username}\nrole: ${me.user.role}${apps}\nurl: ${s.url} (from ${SOURCE_WORDS[s.from.url]})\ntoken: from ${SOURCE_WORDS[s.from.token!]}\n`);
  return 0;
}
