// The code-host REST calls svc makes (GitHub's API, or GitHub Enterprise / a test server through
// SVC_CODEHOST_API_URL): the manifest conversion, and app/installation calls authenticated with the app
// JWT or an installation token. Installation tokens are cached until a minute before they expire.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CredentialsHolder } from './credentials.js';
import { appJwt } from './jwt.js';

export const conversionSchema = z.looseObject({
  id: z.union([z.number().int().positive(), z.string().regex(/^[0-9]+$/)]).transform(String),
  slug: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/),
  client_id: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/),
  client_secret: z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/),
  webhook_secret: z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/),
  pem: z.string().includes('PRIVATE KEY'),
});
export type Conversion = z.infer<typeof conversionSchema>;

export class CodehostError extends Error {}

/** `owner/name` for a URL path: each part checked, so nothing from a delivery can change the path. */
function repoPath(fullName: string): string {
  const m = /^([A-Za-z0-9_.-]{1,100})\/([A-Za-z0-9_.-]{1,100})$/.exec(fullName);
  if (!m || m[1].startsWith('.') || m[2].startsWith('.')) throw new CodehostError(`not a repository name: ${JSON.stringify(fullName.slice(0, 100))}`);
  return `${m[1]}/${m[2]}`;
}

export interface CodehostClient {
  convertManifest(code: string): Promise<Conversion>;
  listInstallations(): Promise<{ id: number }[]>;
  installationToken(installationId: number): Promise<string>;
  listRepositories(installationId: number): Promise<{ total_count: number }>;
  /** The installation that covers `owner/repo`, undefined when the app is not installed there. */
  repoInstallation(fullName: string): Promise<number | undefined>;
  /** A new comment on issue or pull request `number` of `owner/repo`; answers its id (issue 20 reports). */
  createIssueComment(token: string, fullName: string, number: number, body: string): Promise<string>;
  /** Replaces the text of comment `id`; false when it is gone (deleted by someone), so a new one is due. */
  updateIssueComment(token: string, fullName: string, id: string, body: string): Promise<boolean>;
}

export function createCodehostClient(o: { apiUrl: string; creds: CredentialsHolder; now?: () => number; fetch?: typeof fetch }): CodehostClient {
  const now = o.now ?? Date.now;
  const doFetch = o.fetch ?? fetch;
  const tokens = new Map<number, { token: string; expiresMs: number }>();
  o.creds.onChange(() => tokens.clear());

  async function call(method: string, path: string, auth?: string, body?: unknown): Promise<unknown> {
    const res = await doFetch(`${o.apiUrl}${path}`, {
      method,
      headers: {
        accept: 'application/vnd.github+json', 'user-agent': 'svc', 'x-github-api-version': '2022-11-28',
        ...(auth ? { authorization: auth } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    if (!res.ok) throw new CodehostError(`${method} ${path.replace(/\/app-manifests\/[^/]+/, '/app-manifests/…')} answered ${res.status}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new CodehostError(`${method} ${path} answered something that is not JSON`);
    }
  }

  function jwt(): string {
    const { appId, privateKeyPath } = o.creds.get();
    if (!appId || !privateKeyPath) throw new CodehostError('no code-host app is configured (SVC_CODEHOST_APP_ID, SVC_CODEHOST_APP_PRIVATE_KEY)');
    return `Bearer ${appJwt(appId, readFileSync(privateKeyPath, 'utf8'), now())}`;
  }

  const client: CodehostClient = {
    async convertManifest(code) {
      const doc = await call('POST', `/app-manifests/${encodeURIComponent(code)}/conversions`);
      const parsed = conversionSchema.safeParse(doc);
      if (!parsed.success) throw new CodehostError('the conversion answer lacks the app credentials');
      return parsed.data;
    },
    async listInstallations() {
      return z.array(z.looseObject({ id: z.number().int() })).parse(await call('GET', '/app/installations', jwt()));
    },
    async installationToken(id) {
      const cached = tokens.get(id);
      if (cached && cached.expiresMs - 60_000 > now()) return cached.token;
      const doc = z.looseObject({ token: z.string().min(1), expires_at: z.string() }).parse(await call('POST', `/app/installations/${id}/access_tokens`, jwt()));
      tokens.set(id, { token: doc.token, expiresMs: Date.parse(doc.expires_at) || now() + 50 * 60_000 });
      return doc.token;
    },
    async listRepositories(id) {
      const token = await client.installationToken(id);
      return z.looseObject({ total_count: z.number().int() }).parse(await call('GET', '/installation/repositories', `token ${token}`));
    },
    async repoInstallation(fullName) {
      try {
        return z.looseObject({ id: z.number().int() }).parse(await call('GET', `/repos/${repoPath(fullName)}/installation`, jwt())).id;
      } catch (err) {
        if (err instanceof CodehostError && / 404$/.test(err.message)) return undefined;
        throw err;
      }
    },
    async createIssueComment(token, fullName, number, body) {
      const doc = await call('POST', `/repos/${repoPath(fullName)}/issues/${number}/comments`, `token ${token}`, { body });
      return String(z.looseObject({ id: z.union([z.number().int(), z.string().min(1)]) }).parse(doc).id);
    },
    async updateIssueComment(token, fullName, id, body) {
      if (!/^[0-9]{1,20}$/.test(id)) throw new CodehostError('a comment id must be a number');
      try {
        await call('PATCH', `/repos/${repoPath(fullName)}/issues/comments/${id}`, `token ${token}`, { body });
        return true;
      } catch (err) {
        if (err instanceof CodehostError && / 404$/.test(err.message)) return false;
        throw err;
      }
    },
  };
  return client;
}
