// Where `svc login` keeps the daemon's URL and the API token it created: `$XDG_CONFIG_HOME/svc/config`
// (default `~/.config/svc/config`), a JSON object, file mode 600 in a directory of mode 700, like the
// credentials files of gh and docker. Parsing and formatting are pure; reading and writing are thin.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/** What the file holds. `token_id` lets `svc logout` revoke the token (DELETE /api/tokens/{id}). */
export interface LoginFile {
  url: string;
  token: string;
  token_id: number;
  /** The user the token belongs to, when it was created (whoami asks the daemon; this is for people reading the file). */
  user: string;
}

/** The file's path for an environment: XDG_CONFIG_HOME when absolute (the XDG rule), else HOME/.config; none without either. */
export function loginFilePath(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'svc', 'config');
  return env.HOME ? join(env.HOME, '.config', 'svc', 'config') : undefined;
}

/** Pure: the file's text. */
export function formatLoginFile(f: LoginFile): string {
  return JSON.stringify({ url: f.url, token: f.token, token_id: f.token_id, user: f.user }, null, 2) + '\n';
}

/** Pure: the file's content, or an Error saying what is wrong with it (never the token). */
export function parseLoginFile(text: string): LoginFile | Error {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return new Error('is not JSON');
  }
  const o = v as Partial<LoginFile> | null;
  if (!o || typeof o !== 'object') return new Error('is not a JSON object');
  if (typeof o.url !== 'string' || !/^https?:\/\//.test(o.url)) return new Error('has no http(s) "url"');
  if (typeof o.token !== 'string' || o.token === '') return new Error('has no "token"');
  if (!Number.isInteger(o.token_id)) return new Error('has no "token_id"');
  return { url: o.url.replace(/\/+$/, ''), token: o.token, token_id: o.token_id!, user: typeof o.user === 'string' ? o.user : '' };
}

/** The file at `path`: undefined when there is none; an Error when it cannot be used. */
export function readLoginFile(path: string | undefined): LoginFile | Error | undefined {
  if (!path || !existsSync(path)) return undefined;
  const parsed = parseLoginFile(readFileSync(path, 'utf8'));
  return parsed instanceof Error ? new Error(`${path} ${parsed.message}; run svc login again`) : parsed;
}

/** Writes the file (mode 600, its directory 700), replacing it in one rename so no reader sees half of it. */
export function writeLoginFile(path: string, f: LoginFile): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // ours even when it existed: nobody else lists what svc keeps there
  const tmp = join(dir, `.config.${process.pid}.tmp`);
  writeFileSync(tmp, formatLoginFile(f), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function removeLoginFile(path: string): void {
  rmSync(path, { force: true });
}
