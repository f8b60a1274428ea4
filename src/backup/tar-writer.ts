// Writes a gzip'd tar archive entry by entry, so one archive can take files from different places (the
// snapshot staging dir, the data dir) under the names of the contract's layout. Written by hand over tar's
// Header/Pax encoders rather than tar.c() because the data dir is live: a service file that vanishes
// between listing and reading is skipped, one that shrinks is zero-padded to the size its header promised,
// and sockets or devices are left out, where tar.c() would abort the whole backup.
import { createWriteStream, type WriteStream } from 'node:fs';
import { lstat, open, readdir, readlink } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { createGzip, type Gzip } from 'node:zlib';
import { Header, Pax, type ReadEntry } from 'tar';

const BLOCK = 512;

/**
 * gzip level of archives: 1. Measured with bench:backup on a 225 MB Postgres and 1,000 apps: level 6 took
 * 7.97 s for a 75.7 MB archive, level 1 5.17 s for 79.4 MB (+5 % size, -35 % time); most of the bytes are
 * the service data directories, which compress little better at higher levels.
 */
export const GZIP_LEVEL = 1;
const CHUNK = 1024 * 1024;

type EntryType = 'File' | 'Directory' | 'SymbolicLink' | 'Link';

/**
 * Who owns an entry: the numeric uid and gid of the file read here (a service's or an app's files belong to
 * the user its image runs as, and a restore gives them back), or kept from another tar. Absent: root.
 */
interface Owner {
  uid?: number;
  gid?: number;
  uname?: string;
  gname?: string;
}

/**
 * Pure: an entry of an engine's archive (`<basename>/rest`, what `GET /containers/{id}/archive` names them)
 * under `prefix` instead (`services/<name>/rest`); undefined for a name with `..` or outside one top folder.
 */
export function renameUnder(prefix: string, path: string): string | undefined {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..') || path.startsWith('/')) return undefined;
  return [prefix, ...parts.slice(1)].join('/');
}

/** One archive being written to `path` (created exclusively, mode 600). `finish()` flushes and fsyncs. */
export class TarWriter {
  private readonly gzip: Gzip;
  private readonly out: WriteStream;
  private failure: Error | undefined;
  private readonly failed: Promise<never>;

  constructor(readonly path: string, level = GZIP_LEVEL) {
    this.gzip = createGzip({ level });
    this.out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    this.failed = new Promise<never>((_, reject) => {
      const fail = (e: Error) => {
        this.failure ??= e;
        reject(this.failure);
      };
      this.gzip.on('error', fail);
      this.out.on('error', fail);
    });
    this.failed.catch(() => {});
    this.gzip.pipe(this.out);
  }

  private async write(buf: Buffer) {
    if (this.failure) throw this.failure;
    if (!this.gzip.write(buf)) await Promise.race([once(this.gzip, 'drain'), this.failed]);
  }

  private async header(name: string, type: EntryType, mode: number, size: number, mtime: Date, linkpath?: string, owner: Owner = {}) {
    const data = { path: name, type, mode, size, mtime, uid: owner.uid ?? 0, gid: owner.gid ?? 0, uname: owner.uname, gname: owner.gname, linkpath };
    const h = new Header(data);
    if (h.encode()) await this.write(new Pax({ path: name, linkpath, size, mtime, uid: data.uid, gid: data.gid }).encode());
    await this.write(h.block!);
  }

  private async pad(size: number) {
    const rest = size % BLOCK;
    if (rest) await this.write(Buffer.alloc(BLOCK - rest));
  }

  /** An in-memory file (the `.env`). */
  async addBuffer(name: string, content: Buffer, mode = 0o600) {
    await this.header(name, 'File', mode, content.length, new Date());
    await this.write(content);
    await this.pad(content.length);
  }

  async addDir(name: string, mode = 0o700, mtime = new Date(), owner: Owner = {}) {
    await this.header(name.endsWith('/') ? name : `${name}/`, 'Directory', mode, 0, mtime, undefined, owner);
  }

  /** A file from disk; returns false when it vanished before it could be read. */
  async addFile(name: string, source: string): Promise<boolean> {
    let fh;
    try {
      fh = await open(source, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
    try {
      const st = await fh.stat();
      await this.header(name, 'File', st.mode & 0o7777, st.size, st.mtime, undefined, { uid: st.uid, gid: st.gid });
      let done = 0;
      while (done < st.size) {
        const buf = Buffer.alloc(Math.min(CHUNK, st.size - done));
        const { bytesRead } = await fh.read(buf, 0, buf.length, done);
        if (bytesRead === 0) {
          // The file shrank while we read it (a live data dir): keep the header's promise with zeros.
          await this.write(Buffer.alloc(st.size - done));
          break;
        }
        await this.write(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
        done += bytesRead;
      }
      await this.pad(st.size);
      return true;
    } finally {
      await fh.close();
    }
  }

  /**
   * A directory tree from disk under `name`: directories, regular files and symbolic links with their modes
   * and numeric owners; sockets, FIFOs and devices are skipped, entries that vanish meanwhile too. `skip` leaves out top-level names.
   */
  async addTree(name: string, source: string, skip: (rel: string) => boolean = () => false): Promise<void> {
    let st;
    try {
      st = await lstat(source);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    if (st.isDirectory()) {
      await this.addDir(name, st.mode & 0o7777, st.mtime, { uid: st.uid, gid: st.gid });
      let children: string[];
      try {
        children = (await readdir(source)).sort();
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
      for (const child of children) {
        const rel = `${name}/${child}`;
        if (!skip(rel)) await this.addTree(rel, join(source, child), skip);
      }
    } else if (st.isFile()) {
      await this.addFile(name, source);
    } else if (st.isSymbolicLink()) {
      const target = await readlink(source).catch(() => undefined);
      if (target !== undefined) await this.header(name, 'SymbolicLink', 0o777, 0, st.mtime, target, { uid: st.uid, gid: st.gid });
    }
  }

  /**
   * The entries of another tar stream (an engine's archive of a directory: a managed service's data on
   * another node's disk) under `prefix`, owners, modes and times kept: directories, regular files, symbolic
   * and hard links; devices and FIFOs are skipped as addTree skips them. Streamed entry by entry with
   * backpressure (tar's parser waits for each entry to be read), never held in memory. Rejects when the
   * stream breaks or is not a tar.
   */
  async addTar(prefix: string, source: NodeJS.ReadableStream): Promise<void> {
    const { Parser } = await import('tar');
    const parser = new Parser({ strict: true });
    let failure: Error | undefined;
    let chain: Promise<void> = Promise.resolve();
    const fail = (e: unknown) => {
      failure ??= e instanceof Error ? e : new Error(String(e));
    };
    parser.on('entry', (entry: ReadEntry) => {
      chain = chain.then(async () => {
        if (failure) return void entry.resume();
        const name = renameUnder(prefix, entry.path);
        const owner = { uid: entry.uid, gid: entry.gid, uname: entry.uname, gname: entry.gname };
        const mode = (entry.mode ?? 0o600) & 0o7777;
        const mtime = entry.mtime ?? new Date();
        if (!name) return void entry.resume();
        if (entry.type === 'Directory') {
          await this.header(`${name}/`, 'Directory', mode, 0, mtime, undefined, owner);
        } else if (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile') {
          const size = entry.size ?? 0;
          await this.header(name, 'File', mode, size, mtime, undefined, owner);
          let done = 0;
          for await (const chunk of entry as AsyncIterable<Buffer>) {
            await this.write(chunk);
            done += chunk.length;
          }
          if (done !== size) throw new Error(`${name}: the archive stream ended inside the file (${done} of ${size} bytes)`);
          await this.pad(size);
          return;
        } else if (entry.type === 'SymbolicLink') {
          await this.header(name, 'SymbolicLink', 0o777, 0, mtime, entry.linkpath, owner);
        } else if (entry.type === 'Link') {
          const to = renameUnder(prefix, entry.linkpath ?? '');
          if (to) await this.header(name, 'Link', mode, 0, mtime, to, owner);
        }
        entry.resume();
      }).catch((e: unknown) => {
        fail(e);
        entry.resume();
      });
    });
    const ended = new Promise<void>((resolve, reject) => {
      parser.on('end', () => resolve());
      const broke = (why: string) => reject(new Error(`${prefix}: the directory's tar stream broke off or is damaged: ${why}`));
      parser.on('error', (e: Error) => broke(e.message));
      parser.on('warn', (code: string, msg: string) => broke(`${msg} (${code})`));
      source.on('error', (e: Error) => broke(e.message));
    });
    source.pipe(parser as unknown as NodeJS.WritableStream);
    try {
      await ended;
    } catch (e) {
      // The stream broke: an entry may never end, so its copy is not waited for (the caller aborts the archive).
      fail(e);
      (source as { destroy?: () => void }).destroy?.();
      throw failure!;
    }
    await chain;
    if (failure) throw failure;
  }

  /** Ends the tar stream and the gzip member, waits for the file to be written, and fsyncs it. */
  async finish(): Promise<void> {
    await this.write(Buffer.alloc(BLOCK * 2));
    this.gzip.end();
    await Promise.race([once(this.out, 'close'), this.failed]);
    if (this.failure) throw this.failure;
    const fh = await open(this.path, 'r+');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  /** Stops writing after a failure; the caller removes the file. */
  abort() {
    this.gzip.destroy();
    this.out.destroy();
  }
}
