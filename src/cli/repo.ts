// `svc repo APP [--code-host HOST] [--token-stdin | --remove-token]` (API.md "Code hosts beyond GitHub"): the
// app's code host and whether it has a repository access token. The token is read from standard input,
// never from an argument (a `ps` of the machine would show it) nor printed back.
import { appByName, CliError, type Client } from './client.js';

export interface RepoOptions {
  app: string;
  codeHost?: string;
  tokenStdin: boolean;
  removeToken: boolean;
}

/** The token as piped in: one line, the trailing newline and surrounding spaces dropped. */
export function tokenFromInput(text: string): string {
  const token = text.trim();
  if (!token) throw new CliError('no token on standard input (pipe it in: svc repo APP --token-stdin < token-file)', 2);
  if (/\s/.test(token)) throw new CliError('the token on standard input must be one line without spaces', 2);
  return token;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function repoCommand(client: Client, o: RepoOptions, print: (s: string) => void = (s) => void process.stdout.write(s)): Promise<number> {
  if (o.tokenStdin && o.removeToken) throw new CliError('--token-stdin and --remove-token exclude each other', 2);
  const app = await appByName(client, o.app);
  const body: Record<string, unknown> = {};
  // `auto`: derive the host from the repository URL again.
  if (o.codeHost !== undefined) body.code_host = o.codeHost === 'auto' ? null : o.codeHost;
  if (o.tokenStdin) body.repo_token = tokenFromInput(await readStdin());
  if (o.removeToken) body.repo_token = null;
  const shown = Object.keys(body).length > 0 ? await client.json<Record<string, unknown>>('PUT', `/api/apps/${app.id}`, body) : app;
  print(
    `repository:   ${shown.repo_url ?? '-'}\ncode host:    ${shown.code_host ?? 'from the repository URL'}\naccess token: ${shown.repo_token_set ? 'set' : 'not set'}\n`,
  );
  return 0;
}
