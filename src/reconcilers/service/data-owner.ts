// Who a managed service's data directory belongs to (issue 35): the user its image runs as. The official
// postgres, mysql and redis images start as root and chown their data directory themselves, so svc leaves
// theirs as it makes it (root, 700); an image that runs as its own user (bitnami's, uid 1001) cannot even
// enter a root 700 directory, so svc gives the directory to that user before the container starts. Decided
// here, purely, from the image's `Config.User`; the service reconciler applies it (here or on the node).
import { chmodSync, chownSync, statSync } from 'node:fs';

/** What the service's directory itself (not its contents) is given. */
export type DataOwner =
  /** A numeric user (and group; undefined keeps the directory's): owner-only, as for root. */
  | { uid: number; gid: number | undefined; mode: number }
  /**
   * A user named in the image's /etc/passwd, which svc does not read: the directory is opened to every user
   * of the container (mode 777; the data directory above it is 700, so no other user of the host reaches it).
   */
  | { uid: undefined; gid: undefined; mode: number };

const NUMBER = /^[0-9]+$/;
const ROOTS = new Set(['', 'root', '0']);

/**
 * Pure: the owner and mode of a service's data directory for an image whose `Config.User` is `user`, or
 * undefined for an image that runs as root (today's directory: root, 700). `1001` is uid 1001, group 0
 * (what the engine gives a uid its image's /etc/passwd does not list, as bitnami's); `1001:1001` names the
 * group too; a numeric uid with a named group keeps the directory's group.
 */
export function dataDirOwner(user: string | undefined): DataOwner | undefined {
  const [u = '', g] = (user ?? '').trim().split(':');
  if (ROOTS.has(u)) return undefined;
  if (!NUMBER.test(u)) return { uid: undefined, gid: undefined, mode: 0o777 };
  const uid = Number(u);
  if (uid === 0) return undefined;
  const gid = g === undefined || g === '' ? 0 : NUMBER.test(g) ? Number(g) : undefined;
  return { uid, gid, mode: 0o700 };
}

/** Gives this host's directory `dir` its owner and mode when they differ (a restored one usually has them). */
export function applyDataOwner(dir: string, owner: DataOwner): void {
  const st = statSync(dir);
  if (owner.uid !== undefined && (st.uid !== owner.uid || (owner.gid !== undefined && st.gid !== owner.gid))) chownSync(dir, owner.uid, owner.gid ?? -1);
  if ((st.mode & 0o7777) !== owner.mode) chmodSync(dir, owner.mode);
}
