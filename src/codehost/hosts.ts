// Which code host an app's repository is on (API.md "Code hosts beyond GitHub"): set per app (`code_host`),
// or derived from the public hosts' names. A delivery to one host's webhook only concerns apps on that host
// (or whose host is unknown), so `acme/site` on a GitLab instance is never built from a GitHub push.
import type { CodeHost } from './events.js';

/** The public hosts svc recognises by name; a self-hosted instance sets `code_host` on the app. */
const KNOWN: Record<string, CodeHost> = {
  'github.com': 'github',
  'gitlab.com': 'gitlab',
  'gitea.com': 'gitea',
  'codeberg.org': 'forgejo',
};

/** The host named by an https/ssh/scp-like repository URL, or null for any other host (or no URL). */
export function derivedHost(repoUrl: string | null): CodeHost | null {
  if (!repoUrl) return null;
  const scp = /^[^@/\s]+@([^:/\s]+):/.exec(repoUrl);
  let host = scp?.[1];
  if (!host) {
    try {
      host = new URL(repoUrl).hostname;
    } catch {
      return null;
    }
  }
  return KNOWN[host.toLowerCase()] ?? null;
}

export const effectiveHost = (app: { codeHost: CodeHost | null; repoUrl: string | null }): CodeHost | null => app.codeHost ?? derivedHost(app.repoUrl);

/** Gitea and Forgejo send the same payloads (a Forgejo instance may use its "Gitea" webhook type): one family. */
const family = (h: CodeHost) => (h === 'forgejo' ? 'gitea' : h);

/** True when a delivery to `delivery`'s webhook may concern the app: same host (family), or a host svc cannot tell. */
export function deliveryConcerns(app: { codeHost: CodeHost | null; repoUrl: string | null }, delivery: CodeHost): boolean {
  const host = effectiveHost(app);
  return host === null || family(host) === family(delivery);
}

/**
 * The HTTP Basic user name a clone sends with an access token as the password: GitLab documents `oauth2`
 * for its tokens; GitHub, Gitea and Forgejo read the password as the token whatever the user name.
 */
export const tokenUser = (host: CodeHost | null) => (host === 'gitlab' ? 'oauth2' : 'x-access-token');

/**
 * How `repo_token` travels to `repoUrl`: `send` over https, or plain http to a loopback address (a code host
 * on the same machine); `refuse` over plain http elsewhere (it would cross the network in clear); `skip` for
 * transports that carry no HTTP header (ssh, git, file, scp-like).
 */
export function tokenTransport(repoUrl: string): 'send' | 'refuse' | 'skip' {
  let u: URL;
  try {
    u = new URL(repoUrl);
  } catch {
    return 'skip';
  }
  if (u.protocol === 'https:') return 'send';
  if (u.protocol !== 'http:') return 'skip';
  const loopback = u.hostname === 'localhost' || u.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(u.hostname);
  return loopback ? 'send' : 'refuse';
}
