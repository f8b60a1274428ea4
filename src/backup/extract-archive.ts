// Unpacks an archive into a fresh staging directory, refusing anything a svc archive never holds before a
// byte of it is written: absolute paths, `..`, names outside the layout (svc.db, .env, codehost-app.pem,
// dumps/, services/, proxy/), links that point outside the archive, writes through a link, devices and FIFOs, and more
// unpacked bytes than the decompression cap allows. Imports, API restores and `svc restore` all go
// through here, so a malicious or foreign archive is refused with one sentence and nothing outside the
// staging directory is ever touched. Entries under services/ and volumes/ get back their numeric owner,
// mode and time (entry-meta.ts) once the whole archive is written and checked; the rest is root's,
// owner-only. The staging directory is mode 700 throughout, so nobody reaches a file before that.
import { createReadStream, createWriteStream, linkSync, mkdirSync, openSync, statSync, symlinkSync } from 'node:fs';
import { once } from 'node:events';
import { posix, join } from 'node:path';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ReadEntry } from 'tar';
import { applyMeta, keptMeta, type EntryMeta, type MetaType } from './entry-meta.js';

/** A refused archive; the API answers it with 400 and the message. */
export class ArchiveError extends Error {}

/** Unpacked bytes allowed: 200 times the compressed size, and never less than 1 GiB. */
export const UNPACK_RATIO = 200;
export const UNPACK_FLOOR = 1024 ** 3;

export interface ArchiveContents {
  /** Services with a data directory in the archive. */
  serviceDirs: string[];
  /** Services with `dumps/<name>.sql`. */
  dumps: string[];
  hasEnv: boolean;
  hasProxy: boolean;
  /** `volumes/<app>/<name>` directories the archive holds. */
  volumeDirs: string[];
  unpackedBytes: number;
}

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const TOP = new Set(['svc.db', '.env', 'codehost-app.pem', 'dumps', 'services', 'proxy', 'volumes']);
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** The archive-relative path of an entry, or an ArchiveError saying why it is refused. */
export function checkEntryPath(raw: string): string {
  if (raw.includes('\0') || raw.includes('\\')) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} has a forbidden character`);
  if (raw.startsWith('/')) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} is an absolute path`);
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} climbs out with ..`);
  if (parts.length === 0) return '';
  if (!TOP.has(parts[0])) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} is not part of a svc backup (svc.db, .env, codehost-app.pem, dumps/, services/, proxy/, volumes/)`);
  if ((parts[0] === 'svc.db' || parts[0] === '.env' || parts[0] === 'codehost-app.pem') && parts.length > 1) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} is not part of a svc backup`);
  if (parts[0] === 'services' && parts.length > 1 && !NAME.test(parts[1])) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} names an invalid service`);
  if (parts[0] === 'volumes' && parts.slice(1, 3).some((p) => !NAME.test(p))) throw new ArchiveError(`archive entry ${JSON.stringify(raw)} names an invalid app or volume`);
  if (parts[0] === 'dumps' && parts.length > 1 && (parts.length > 2 || !/^[a-z][a-z0-9-]{0,62}\.sql$/.test(parts[1]))) {
    throw new ArchiveError(`archive entry ${JSON.stringify(raw)} is not a service dump`);
  }
  return parts.join('/');
}

/** A symbolic link's target must stay inside the archive (relative, resolving under its root). */
export function checkLinkTarget(entry: string, target: string): void {
  if (target.startsWith('/')) throw new ArchiveError(`link ${entry} points to the absolute path ${target}`);
  const resolved = posix.normalize(posix.join(posix.dirname(entry), target));
  if (resolved === '..' || resolved.startsWith('../')) throw new ArchiveError(`link ${entry} points outside the archive (${target})`);
}

/**
 * Unpacks `file` into `dest` (an empty directory the caller created and removes on failure). `capBytes`
 * overrides the decompression cap (tests). `chown` (default: when running as root, as the daemon does)
 * gives the entries under services/ and volumes/ their archived owners; without it they are this
 * process's, with their archived modes.
 */
export async function extractArchive(file: string, dest: string, opts: { capBytes?: number; chown?: boolean } = {}): Promise<ArchiveContents> {
  // tar is loaded at the first restore or import: an idle daemon never needs it.
  const { Parser } = await import('tar');
  const compressed = statSync(file).size;
  const cap = opts.capBytes ?? Math.max(UNPACK_FLOOR, compressed * UNPACK_RATIO);
  const contents: ArchiveContents = { serviceDirs: [], dumps: [], hasEnv: false, hasProxy: false, volumeDirs: [], unpackedBytes: 0 };
  const links = new Set<string>();
  const files = new Set<string>();
  const writes: Promise<unknown>[] = [];
  // Owners, modes and times given once everything is written: a directory's last, deepest first, so
  // neither a read-only mode nor a later child undoes them.
  const metas: { path: string; type: MetaType; meta: EntryMeta }[] = [];
  const keep = (path: string, type: MetaType, rel: string, entry: ReadEntry) => {
    const meta = keptMeta(rel, type, entry);
    if (meta) metas.push({ path, type, meta });
  };
  let failure: Error | undefined;
  let sawDb = false;

  const source = createReadStream(file);
  const gunzip = createGunzip();
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      contents.unpackedBytes += chunk.length;
      if (contents.unpackedBytes > cap) return cb(new ArchiveError(`archive unpacks to more than ${cap} bytes (decompression cap); refused`));
      cb(null, chunk);
    },
  });
  const parser = new Parser({ strict: true });
  let signalFailed!: () => void;
  const failed = new Promise<void>((resolve) => (signalFailed = resolve));
  const fail = (e: unknown) => {
    if (failure) return;
    failure = e instanceof ArchiveError ? e : new ArchiveError(`not a readable svc backup archive: ${(e as Error).message ?? e}`);
    signalFailed();
    source.destroy();
    gunzip.destroy();
    counter.destroy();
    parser.abort(failure);
  };

  const onEntry = (entry: ReadEntry) => {
    try {
      if (failure) return entry.resume();
      const rel = checkEntryPath(entry.path);
      const parts = rel.split('/');
      // Never write through a link the archive made earlier (services/x -> ..; services/x/evil).
      for (let i = 1; i < parts.length; i++) {
        if (links.has(parts.slice(0, i).join('/'))) throw new ArchiveError(`archive entry ${rel} would be written through the link ${parts.slice(0, i).join('/')}`);
      }
      if (rel === '') return entry.resume();
      const target = join(dest, ...parts);
      if (entry.type === 'Directory') {
        mkdirSync(target, { recursive: true, mode: 0o700 });
        keep(target, 'Directory', rel, entry);
      } else if (FILE_TYPES.has(entry.type)) {
        if ((entry.size ?? 0) > cap - contents.unpackedBytes) throw new ArchiveError(`archive entry ${rel} is larger than the decompression cap allows; refused`);
        if (files.has(rel) || links.has(rel)) throw new ArchiveError(`archive entry ${rel} appears twice`);
        mkdirSync(join(target, '..'), { recursive: true, mode: 0o700 });
        const fd = openSync(target, 'wx', (entry.mode ?? 0o600) & 0o700 | 0o600);
        files.add(rel);
        keep(target, 'File', rel, entry);
        const out = createWriteStream('', { fd });
        writes.push(once(out, 'close'));
        out.on('error', fail);
        entry.pipe(out);
        return;
      } else if (entry.type === 'SymbolicLink') {
        checkLinkTarget(rel, entry.linkpath ?? '');
        mkdirSync(join(target, '..'), { recursive: true, mode: 0o700 });
        symlinkSync(entry.linkpath!, target);
        links.add(rel);
        keep(target, 'SymbolicLink', rel, entry);
      } else if (entry.type === 'Link') {
        const to = checkEntryPath(entry.linkpath ?? '');
        if (!files.has(to)) throw new ArchiveError(`hard link ${rel} points to ${entry.linkpath}, which is not a file earlier in the archive`);
        mkdirSync(join(target, '..'), { recursive: true, mode: 0o700 });
        linkSync(join(dest, ...to.split('/')), target);
      } else {
        throw new ArchiveError(`archive entry ${rel} is a ${entry.type}; devices, FIFOs and other special files are refused`);
      }
      entry.resume();
    } catch (e) {
      entry.resume();
      fail(e);
    }
  };
  parser.on('entry', (e: ReadEntry) => {
    const rel = safeRel(e.path);
    if (rel === 'svc.db' && FILE_TYPES.has(e.type)) sawDb = true;
    if (rel === '.env' && FILE_TYPES.has(e.type)) contents.hasEnv = true;
    if (rel?.startsWith('proxy')) contents.hasProxy = true;
    const m = rel?.match(/^services\/([^/]+)/);
    if (m && !contents.serviceDirs.includes(m[1])) contents.serviceDirs.push(m[1]);
    const vm = rel?.match(/^volumes\/([^/]+\/[^/]+)/);
    if (vm && !contents.volumeDirs.includes(vm[1])) contents.volumeDirs.push(vm[1]);
    const dm = rel?.match(/^dumps\/([^/]+)\.sql$/);
    if (dm && FILE_TYPES.has(e.type)) contents.dumps.push(dm[1]);
    onEntry(e);
  });
  parser.on('warn', (code: string, msg: string) => fail(new ArchiveError(`archive is damaged: ${msg} (${code})`)));
  parser.on('error', fail);

  const done = new Promise<void>((resolve) => parser.on('end', () => resolve()));
  for (const s of [source, gunzip, counter]) s.on('error', fail);
  source.pipe(gunzip).pipe(counter).pipe(parser as unknown as NodeJS.WritableStream);
  await Promise.race([done, failed]);
  await Promise.allSettled(writes);
  if (failure) throw failure;
  if (!sawDb) throw new ArchiveError('not a svc backup: the archive has no svc.db');
  const chown = opts.chown ?? process.getuid?.() === 0;
  for (const m of metas.filter((x) => x.type !== 'Directory')) applyMeta(m.path, m.type, m.meta, chown);
  for (const m of metas.filter((x) => x.type === 'Directory').reverse()) applyMeta(m.path, m.type, m.meta, chown);
  return contents;
}

function safeRel(p: string): string | undefined {
  try {
    return checkEntryPath(p);
  } catch {
    return undefined;
  }
}
