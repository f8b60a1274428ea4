// Fetches one commit of a repository into an empty directory with git run through argument arrays
// (never a shell string), every user value checked and placed after `--`. A token for a private
// repository travels as an http.extraHeader through GIT_CONFIG_* environment variables: never in the URL,
// the argument list (visible in `ps`), a log line or an event.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BRANCH_RE, COMMIT_RE, repoUrlProblem } from './repo-url.js';

export interface GitResult {
  stdout: string;
  stderr: string;
}
/** Runs `git` with `args` in `cwd`; the adapter tests swap in a recorder. */
export type GitRunner = (args: string[], o: { cwd: string; env: Record<string, string>; signal?: AbortSignal }) => Promise<GitResult>;

export const execGit: GitRunner = (args, o) =>
  new Promise((resolve, reject) => {
    execFile('git', args, { cwd: o.cwd, env: o.env, signal: o.signal, timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(lastLines(String(stderr)) || err.message), { stderr: String(stderr) }));
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });

const lastLines = (s: string) => s.trim().split('\n').slice(-5).join('\n');

export interface CheckoutInput {
  url: string;
  branch: string;
  /** Full or abbreviated commit; undefined: the branch head. */
  commit?: string | null;
  /** An empty directory that receives the working tree. */
  dir: string;
  /** Access token for a private repository on the code host (an installation token, or the app's `repo_token`). */
  token?: string;
  /** The HTTP Basic user name sent with the token (src/codehost/hosts.ts tokenUser); default `x-access-token`. */
  tokenUser?: string;
  signal?: AbortSignal;
}

/** The environment of every git call: no prompts, no system or user config, only plain transports. */
export function gitEnv(token?: string, tokenUser = 'x-access-token'): Record<string, string> {
  const config: [string, string][] = [
    ['core.hooksPath', '/dev/null'],
    ['protocol.allow', 'never'],
    ['protocol.https.allow', 'always'],
    ['protocol.http.allow', 'always'],
    ['protocol.ssh.allow', 'always'],
    ['protocol.git.allow', 'always'],
    ['protocol.file.allow', 'always'],
    ['advice.detachedHead', 'false'],
  ];
  if (token) config.push(['http.extraHeader', `Authorization: Basic ${basicCredentials(tokenUser, token)}`]);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/**
 * Fetches `commit` (or the head of `branch`) of `url` into `dir` and checks it out; returns the full
 * commit id. The `.git` directory is removed afterwards: the build context is the tree only.
 */
export async function checkout(input: CheckoutInput, run: GitRunner = execGit): Promise<string> {
  const problem = repoUrlProblem(input.url);
  if (problem) throw new Error(`repository URL ${problem}`);
  if (!BRANCH_RE.test(input.branch)) throw new Error('branch is not a valid git branch name');
  if (input.commit && !COMMIT_RE.test(input.commit)) throw new Error('commit must be a hex commit id');
  const o = { cwd: input.dir, env: gitEnv(input.token, input.tokenUser), signal: input.signal };
  await run(['init', '-q'], o);
  const full = input.commit && /^([0-9a-f]{40}|[0-9a-f]{64})$/i.test(input.commit);
  try {
    if (full) await run(['fetch', '-q', '--no-tags', '--depth', '1', '--', input.url, input.commit!.toLowerCase()], o);
    else await run(['fetch', '-q', '--no-tags', ...(input.commit ? [] : ['--depth', '1']), '--', input.url, `refs/heads/${input.branch}`], o);
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^fatal: /gm, '') : String(err);
    const what = input.commit ? `commit ${input.commit}` : `branch ${input.branch}`;
    throw new Error(`could not fetch ${what}: ${redactToken(why, input.token, input.tokenUser)}`);
  }
  const target = input.commit && !full ? `${input.commit.toLowerCase()}^{commit}` : 'FETCH_HEAD^{commit}';
  let sha: string;
  try {
    sha = (await run(['rev-parse', '--verify', '--end-of-options', target], o)).stdout.trim();
  } catch {
    throw new Error(`commit ${input.commit} is not on branch ${input.branch}`);
  }
  await run(['checkout', '-q', '--detach', sha], o);
  await rm(join(input.dir, '.git'), { recursive: true, force: true });
  return sha;
}

const basicCredentials = (user: string, token: string) => Buffer.from(`${user}:${token}`).toString('base64');

/** The token, and the header value carrying it, never leave in an error message (events, logs). */
const redactToken = (s: string, token?: string, user = 'x-access-token') =>
  token ? s.split(token).join('[redacted]').split(basicCredentials(user, token)).join('[redacted]') : s;
