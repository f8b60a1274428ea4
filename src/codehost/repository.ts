// Which app a delivery is about, and which image a run built. Pure string rules of API.md.

/**
 * True when `repoUrl` names the repository `fullName` (`owner/name`): the URL without a trailing `.git`
 * or `/` ends with `/<full_name>` (or `:<full_name>` for scp-like `git@host:owner/name`), compared
 * case-insensitively as GitHub treats names.
 */
export function repoMatches(repoUrl: string | null, fullName: string): boolean {
  if (!repoUrl || !/^[^/\s]+\/[^/\s]+$/.test(fullName)) return false;
  const url = repoUrl.trim().replace(/\/+$/, '').replace(/\.git$/i, '').toLowerCase();
  const name = fullName.toLowerCase();
  return url.endsWith(`/${name}`) || url.endsWith(`:${name}`);
}

/** `registry:5000/team/web:1.2` -> `registry:5000/team/web`; a digest is dropped as well. */
export function imageWithoutTag(ref: string): string {
  const noDigest = ref.split('@')[0];
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/** The image a successful run pushed for a commit: the app's image name with the full commit as tag. */
export const imageForCommit = (imageRef: string, sha: string) => `${imageWithoutTag(imageRef)}:${sha}`;

/** The image svc builds for a commit of a `svc_build` app (API.md "Building from source"). */
export const builtImage = (appName: string, sha: string) => `${builtImageRepository(appName)}:${sha}`;

/** The repository of every image svc built for an app: removed with the app. */
export const builtImageRepository = (appName: string) => `svc-build/${appName}`;
