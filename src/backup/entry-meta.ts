// What a restore gives back of an archive entry besides its bytes (issue 35): the numeric owner, group, mode
// and time of every file, directory and link under `services/` and `volumes/`, the data a service or an app
// wrote as the user its image runs as. Everything else of a svc archive (svc.db, .env, proxy/, dumps/, the
// code-host key) is the daemon's own and stays root's, owner-only. Decided here, purely; extract-archive.ts
// applies it once the entry is written.
import { chmodSync, chownSync, lchownSync, utimesSync } from 'node:fs';

/** Owner, mode and time to give an unpacked entry. */
export interface EntryMeta {
  uid: number;
  gid: number;
  /** Permission bits to set (none for a symbolic link, whose mode means nothing on Linux). */
  mode?: number;
  mtime?: Date;
}

export type MetaType = 'Directory' | 'File' | 'SymbolicLink';

/** Header fields the rule reads (tar's ReadEntry has them). */
export interface EntryHeader {
  uid?: number;
  gid?: number;
  mode?: number;
  mtime?: Date;
}

/** Folders whose entries keep their owners and modes. */
const KEPT_TOPS = new Set(['services', 'volumes']);

/**
 * Pure: the owner, mode and time an entry at archive path `rel` gets, or undefined for an entry that keeps
 * today's rule (root's, owner-only). Owners are numeric (names mean nothing in another host's or image's
 * /etc/passwd); a missing or invalid id is root. Set-user-id and set-group-id bits of files are dropped (a
 * data directory holds data, and a restored file must never give a container's user someone else's rights);
 * directories keep set-group-id (new files take the directory's group) and the sticky bit.
 */
export function keptMeta(rel: string, type: MetaType, h: EntryHeader): EntryMeta | undefined {
  if (!KEPT_TOPS.has(rel.split('/')[0])) return undefined;
  const id = (n: number | undefined) => (Number.isInteger(n) && n! >= 0 ? n! : 0);
  const meta: EntryMeta = { uid: id(h.uid), gid: id(h.gid), mtime: h.mtime };
  if (type === 'Directory') meta.mode = (h.mode ?? 0o700) & 0o3777;
  if (type === 'File') meta.mode = (h.mode ?? 0o600) & 0o777;
  return meta;
}

/**
 * Gives `path` its owner (when `chown`: only root may), mode and time. A symbolic link gets its own owner
 * (lchown), never its target's.
 */
export function applyMeta(path: string, type: MetaType, meta: EntryMeta, chown: boolean): void {
  if (type === 'SymbolicLink') {
    if (chown) lchownSync(path, meta.uid, meta.gid);
    return;
  }
  if (chown) chownSync(path, meta.uid, meta.gid);
  // After the chown: a chown by root clears set-group-id bits the mode may carry.
  if (meta.mode !== undefined) chmodSync(path, meta.mode);
  if (meta.mtime && !Number.isNaN(meta.mtime.getTime())) utimesSync(path, meta.mtime, meta.mtime);
}
