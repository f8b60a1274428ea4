// Which repository URLs svc hands to git (API.md "Building from source"): `https://`, `http://`,
// `ssh://`, `git://`, scp-like `git@host:owner/name` and `file://`. Checked at the API and again right
// before git runs, so an option-looking value (`--upload-pack=...`, `-c ...`, `ssh://-oProxyCommand=...`)
// or a transport helper (`ext::sh -c ...`) never reaches git as anything but a plain URL after `--`.

const SCHEMES = /^(https?|ssh|git|file):\/\/[^\s]*$/i;
const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._~\/-]+$/;

/** Undefined when `url` is an acceptable repository URL, else the reason it is not. */
export function repoUrlProblem(url: string): string | undefined {
  if (url.length === 0 || url.length > 2048) return 'must be 1 to 2048 characters';
  if (url.startsWith('-')) return 'must not start with -';
  if (/[\s\x00-\x1f\x7f]/.test(url)) return 'must not contain white space or control characters';
  if (SCP_LIKE.test(url)) return undefined;
  if (!SCHEMES.test(url)) return 'must be an https://, ssh://, git://, file:// or git@host:owner/name URL';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (u.protocol !== 'file:' && !u.hostname) return 'needs a host';
  if (u.hostname.startsWith('-') || u.username.startsWith('-') || decodeURIComponent(u.hostname).startsWith('-')) return 'host and user must not start with -';
  return undefined;
}

/** A branch name git accepts and that cannot be read as an option. */
export const BRANCH_RE = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9._/-]{1,255}(?<![./])$/;

/** A full or abbreviated hex commit id. */
export const COMMIT_RE = /^[0-9a-f]{7,64}$/i;

/** The URL as it may appear in an event or a log line: any user:password@ part removed. */
export function displayUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1');
}
