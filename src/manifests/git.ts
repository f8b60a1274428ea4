// The git manifest source's adapter: keeps a private clone under the data directory and brings it to the
// head of the configured branch. git runs with argument arrays only (never a shell), `--` before every
// user value, no terminal prompt, and a time limit; the URL may be anything git accepts, `file://` too.
// A force-pushed branch simply moves: the fetched ref is forced and the checkout is detached at it.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';

export interface GitSourceSettings {
  url: string;
  branch: string;
  /** Directory of the manifests inside the repository; '' for the root. */
  path: string;
  /** Where the clone lives (under the data directory). */
  cloneDir: string;
  timeoutMs?: number;
}

export interface GitCheckout {
  /** The commit now checked out: the revision of this apply. */
  revision: string;
  /** The manifests directory inside the checkout. */
  dir: string;
}

const BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,255}$/;
const TARGET_REF = 'refs/svc/manifests';

/** Checks the settings once, so a bad value is a clear error instead of an odd git failure. */
export function checkGitSettings(s: GitSourceSettings): void {
  if (s.url.startsWith('-') || /\s/.test(s.url)) throw new Error('SVC_MANIFESTS_GIT_URL must not start with - or contain white space');
  if (!BRANCH.test(s.branch)) throw new Error('SVC_MANIFESTS_GIT_BRANCH is not a branch name');
  const inside = resolve(s.cloneDir, s.path);
  if (inside !== resolve(s.cloneDir) && !inside.startsWith(resolve(s.cloneDir) + sep)) throw new Error('SVC_MANIFESTS_GIT_PATH must stay inside the repository');
}

function git(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      'git',
      args,
      { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', LC_ALL: 'C' } },
      (err, stdout, stderr) => {
        if (!err) return resolvePromise(stdout.trim());
        const line = String(stderr).trim().split('\n').filter(Boolean).pop() ?? err.message;
        reject(new Error(`git ${args[0] === '-C' ? args[2] : args[0]} failed: ${line}`));
      },
    );
  });
}

/** Fetches the branch head and checks it out; throws an Error naming what failed (unreachable remote, ...). */
export async function syncGitCheckout(s: GitSourceSettings): Promise<GitCheckout> {
  checkGitSettings(s);
  const timeout = s.timeoutMs ?? 120_000;
  const repo = s.cloneDir;
  if (!existsSync(join(repo, '.git'))) {
    mkdirSync(repo, { recursive: true, mode: 0o700 });
    await git(['init', '--quiet', '--', repo], timeout);
  }
  await git(['-C', repo, 'fetch', '--quiet', '--force', '--no-tags', '--depth=1', '--', s.url, `+refs/heads/${s.branch}:${TARGET_REF}`], timeout);
  const revision = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `${TARGET_REF}^{commit}`], timeout);
  await git(['-C', repo, 'checkout', '--quiet', '--force', '--detach', revision], timeout);
  await git(['-C', repo, 'clean', '--quiet', '-d', '--force', '-x'], timeout);
  return { revision, dir: resolve(repo, s.path) };
}
