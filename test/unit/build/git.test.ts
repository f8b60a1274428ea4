// The git adapter against real local repositories (file:// URLs), and the security fuzz: shell
// metacharacters and option-looking values in every field that reaches git run nothing and write
// nothing outside the checkout directory (the class of Coolify CVE-2025-66209..66213).
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkout, execGit, gitEnv, type GitRunner } from '../../../src/build/git.js';
import { repoUrlProblem } from '../../../src/build/repo-url.js';
import { createTestRepo, type TestRepo } from '../../support/git-repo.js';
import { startGitHttpServer } from '../../support/git-http-server.js';

let repo: TestRepo;
let first: string;
let second: string;
let scratch: string;
beforeAll(async () => {
  repo = await createTestRepo('acme/site');
  first = await repo.commit({ 'index.html': 'one' });
  second = await repo.commit({ 'index.html': 'two' });
  scratch = await mkdtemp(join(tmpdir(), 'svc-test-checkout-'));
});
afterAll(async () => {
  await repo.remove();
  await rm(scratch, { recursive: true, force: true });
});

let n = 0;
const freshDir = async () => {
  const dir = join(scratch, `c${++n}`);
  await import('node:fs/promises').then((fs) => fs.mkdir(dir));
  return dir;
};

describe('checkout', () => {
  it('fetches the branch head, and any commit of the branch, without the .git directory', async () => {
    const head = await freshDir();
    expect(await checkout({ url: repo.url, branch: 'main', dir: head })).toBe(second);
    expect(readFileSync(join(head, 'index.html'), 'utf8')).toBe('two');
    expect(existsSync(join(head, '.git'))).toBe(false);
    const old = await freshDir();
    expect(await checkout({ url: repo.url, branch: 'main', commit: first, dir: old })).toBe(first);
    expect(readFileSync(join(old, 'index.html'), 'utf8')).toBe('one');
    const short = await freshDir();
    expect(await checkout({ url: repo.url, branch: 'main', commit: first.slice(0, 10), dir: short })).toBe(first);
  });

  it('says what failed for an unknown commit or an unreachable repository', async () => {
    await expect(checkout({ url: repo.url, branch: 'main', commit: 'f'.repeat(40), dir: await freshDir() })).rejects.toThrow(/could not fetch commit f{40}/);
    await expect(checkout({ url: 'file:///nonexistent/acme/site.git', branch: 'main', dir: await freshDir() })).rejects.toThrow(/could not fetch branch main/);
  });

  it('sends a token as an http.extraHeader in the environment, never in the arguments or the URL', async () => {
    const calls: { args: string[]; env: Record<string, string> }[] = [];
    const recorder: GitRunner = async (args, o) => {
      calls.push({ args, env: o.env });
      return execGit(args, o);
    };
    await checkout({ url: repo.url, branch: 'main', dir: await freshDir(), token: 'ghs_secrettoken' }, recorder);
    for (const c of calls) expect(c.args.join(' ')).not.toContain('ghs_secrettoken');
    const env = gitEnv('ghs_secrettoken');
    const header = Object.keys(env).find((k) => env[k] === 'http.extraHeader')!;
    expect(env[header.replace('KEY', 'VALUE')]).toBe(`Authorization: Basic ${Buffer.from('x-access-token:ghs_secrettoken').toString('base64')}`);
    expect(calls[0].env).toEqual(env);
  });

  it('clones over HTTP from a code host that requires the token, with the host\'s Basic user (GitLab: oauth2)', async () => {
    const root = repo.url.slice('file://'.length).replace(/\/acme\/site\.git$/, '');
    const server = await startGitHttpServer(root, { user: 'oauth2', token: 'glpat-secret' });
    try {
      const url = `${server.url}/acme/site.git`;
      expect(await checkout({ url, branch: 'main', commit: first, dir: await freshDir(), token: 'glpat-secret', tokenUser: 'oauth2' })).toBe(first);
      expect(server.requests.filter((r) => r.authorized).length).toBeGreaterThan(0);
      expect(server.requests.some((r) => r.urlHadCredentials)).toBe(false);
      // Without the token, or with GitHub's user name, the host refuses.
      await expect(checkout({ url, branch: 'main', dir: await freshDir() })).rejects.toThrow(/could not fetch branch main/);
      await expect(checkout({ url, branch: 'main', dir: await freshDir(), token: 'glpat-secret' })).rejects.toThrow(/could not fetch/);
    } finally {
      await server.close();
    }
  });

  it('never lets the token or its header value through an error message', async () => {
    const header = Buffer.from('oauth2:glpat-leak').toString('base64');
    const failing: GitRunner = async (args, o) => {
      if (args[0] === 'fetch') throw new Error(`fatal: unable to access 'https://oauth2:glpat-leak@host/': header Authorization: Basic ${header}`);
      return execGit(args, o);
    };
    const err = await checkout({ url: 'https://gitlab.example/acme/site.git', branch: 'main', dir: await freshDir(), token: 'glpat-leak', tokenUser: 'oauth2' }, failing).catch((e: Error) => e);
    expect(String(err)).toMatch(/could not fetch/);
    expect(String(err)).not.toContain('glpat-leak');
    expect(String(err)).not.toContain(header);
  });
});

describe('security fuzz', () => {
  const marker = () => join(scratch, 'pwned');
  const evil = (what: string) => [
    `;touch ${marker()}`,
    `$(touch ${marker()})`,
    `\`touch ${marker()}\``,
    `main\ntouch ${marker()}`,
    `--upload-pack=touch ${marker()}`,
    `--upload-pack=touch${'\t'}${what}`,
    '-c core.sshCommand=touch',
    `ext::sh -c touch% ${marker()}`,
    `ssh://-oProxyCommand=touch%20${marker()}/x`,
    `-oProxyCommand=touch ${marker()}`,
    '--output=/tmp/x',
    `file://${scratch}/x;touch ${marker()}`,
  ];

  it.each(['url', 'branch', 'commit'] as const)('in %s: refused or harmless, nothing executed, nothing written outside the checkout', async (field) => {
    const before = readdirSync(scratch).sort();
    for (const value of evil(field)) {
      const dir = await freshDir();
      const input = { url: repo.url, branch: 'main', commit: undefined as string | undefined, dir };
      if (field === 'url') input.url = value;
      if (field === 'branch') input.branch = value;
      if (field === 'commit') input.commit = value;
      await expect(checkout(input)).rejects.toThrow();
      expect(existsSync(marker())).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
      before.push(`c${n}`);
    }
    expect(readdirSync(scratch).sort()).toEqual(before.sort());
  });

  it('the API-side check refuses the same URLs', () => {
    for (const value of evil('url')) expect(repoUrlProblem(value), value).toBeDefined();
    for (const ok of ['https://github.com/acme/site', 'git@github.com:acme/site.git', 'ssh://git@host/acme/site', 'file:///srv/git/acme/site.git']) {
      expect(repoUrlProblem(ok), ok).toBeUndefined();
    }
  });

  it('a repository whose files point outside through a symlink writes nothing outside', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'svc-test-outside-'));
    try {
      const evilRepo = await createTestRepo('acme/evil');
      try {
        // A symlink to a directory outside, then a commit that adds a file "through" it.
        const work = evilRepo.url.replace('file://', '').replace(/acme\/evil\.git$/, 'work');
        symlinkSync(outside, join(work, 'escape'));
        await evilRepo.commit({});
        const dir = await freshDir();
        await checkout({ url: evilRepo.url, branch: 'main', dir }).catch(() => undefined);
        expect(readdirSync(outside)).toEqual([]);
      } finally {
        await evilRepo.remove();
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
