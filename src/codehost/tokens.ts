// Which token, if any, a clone of `repo_url` carries: with a code-host app configured and the repository
// on the code host's web host, the token of the installation that covers it. Anything else (a public
// repository, another host, no app, the app not installed there) clones without one.
import type { CodehostClient } from './client.js';
import type { CredentialsHolder } from './credentials.js';

/** `owner/name` of an https URL on `webUrl`'s host, else undefined. */
export function repoOnHost(repoUrl: string, webUrl: string): string | undefined {
  try {
    const u = new URL(repoUrl);
    if (u.protocol !== 'https:' || u.host.toLowerCase() !== new URL(webUrl).host.toLowerCase()) return undefined;
    const m = /^\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(\.git)?\/?$/.exec(u.pathname);
    return m ? `${m[1]}/${m[2]}` : undefined;
  } catch {
    return undefined;
  }
}

export function installationTokenFor(client: CodehostClient, creds: CredentialsHolder, webUrl: string) {
  return async (repoUrl: string): Promise<string | undefined> => {
    const { appId, privateKeyPath } = creds.get();
    const fullName = repoOnHost(repoUrl, webUrl);
    if (!appId || !privateKeyPath || !fullName) return undefined;
    try {
      const id = await client.repoInstallation(fullName);
      return id === undefined ? undefined : await client.installationToken(id);
    } catch {
      return undefined;
    }
  };
}
