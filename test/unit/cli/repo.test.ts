// `svc repo APP` (issue 20): the code host and token go through PUT /api/apps/{id}; the token comes from
// standard input only and is never printed.
import { describe, expect, it } from 'vitest';
import type { Client } from '../../../src/cli/client.js';
import { repoCommand, tokenFromInput } from '../../../src/cli/repo.js';

function fakeClient(calls: { method: string; path: string; body?: unknown }[]): Client {
  const app = { id: 4, name: 'web', repo_url: 'https://gitlab.example.com/acme/web.git', code_host: null, repo_token_set: false };
  return {
    url: 'http://x',
    raw: async () => new Response(),
    async json(method: string, path: string, body?: unknown) {
      calls.push({ method, path, body });
      return (method === 'PUT' ? { ...app, ...(body as object), repo_token: undefined, repo_token_set: true } : app) as never;
    },
  } as Client;
}

describe('svc repo', () => {
  it('reads one token line from standard input; refuses none or several words', () => {
    expect(tokenFromInput('glpat-abc\n')).toBe('glpat-abc');
    expect(() => tokenFromInput('\n')).toThrow(/no token/);
    expect(() => tokenFromInput('a b\n')).toThrow(/one line/);
  });

  it('sets the code host (auto: derived) and shows set / not set, never the token', async () => {
    const calls: { method: string; path: string; body?: unknown }[] = [];
    const out: string[] = [];
    const print = (s: string) => void out.push(s);
    expect(await repoCommand(fakeClient(calls), { app: 'web', tokenStdin: false, removeToken: false }, print)).toBe(0);
    expect(await repoCommand(fakeClient(calls), { app: 'web', codeHost: 'auto', tokenStdin: false, removeToken: true }, print)).toBe(0);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/app-names/web', 'GET /api/app-names/web', 'PUT /api/apps/4']);
    expect(calls[2].body).toEqual({ code_host: null, repo_token: null });
    expect(out[0]).toContain('access token: not set');
    expect(out[1]).toContain('code host:    from the repository URL');
  });

  it('refuses --token-stdin with --remove-token', async () => {
    await expect(repoCommand(fakeClient([]), { app: 'web', tokenStdin: true, removeToken: true })).rejects.toThrow(/exclude each other/);
  });
});
