// Local git repositories for build tests: a bare repository served as a `file://` URL, with commits made
// from a map of file contents. No network, no code host; `git` runs through argument arrays.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

export interface TestRepo {
  /** `file://` URL of the bare repository, ending in `/<owner>/<name>.git`. */
  url: string;
  /** Commits `files` (path -> content; null deletes) on `branch` and pushes; returns the full commit id. */
  commit(files: Record<string, string | null>, branch?: string): Promise<string>;
  remove(): Promise<void>;
}

export async function createTestRepo(fullName = 'acme/site'): Promise<TestRepo> {
  const root = await mkdtemp(join(tmpdir(), 'svc-test-git-'));
  const bare = join(root, `${fullName}.git`);
  const work = join(root, 'work');
  await mkdir(bare, { recursive: true });
  await run('git', ['init', '-q', '--bare', '-b', 'main', bare], { env });
  await run('git', ['init', '-q', '-b', 'main', work], { env });
  const git = (...args: string[]) => run('git', args, { cwd: work, env });
  await git('remote', 'add', 'origin', bare);
  return {
    url: `file://${bare}`,
    async commit(files, branch = 'main') {
      const branches = (await git('branch', '--list', branch)).stdout.trim();
      const has = (await git('rev-parse', '--verify', '-q', 'HEAD').catch(() => ({ stdout: '' }))).stdout.trim();
      if (has) await git('checkout', '-q', ...(branches ? [branch] : ['-b', branch]));
      else await git('checkout', '-q', '-b', branch).catch(() => undefined);
      for (const [path, content] of Object.entries(files)) {
        if (content === null) await rm(join(work, path), { force: true });
        else {
          await mkdir(dirname(join(work, path)), { recursive: true });
          await writeFile(join(work, path), content);
        }
      }
      await git('add', '-A');
      await git('commit', '-q', '--allow-empty', '-m', `commit ${Date.now()}`);
      await git('push', '-q', 'origin', `${branch}:${branch}`);
      return (await git('rev-parse', 'HEAD')).stdout.trim();
    },
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
