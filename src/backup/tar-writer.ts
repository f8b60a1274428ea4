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
import { Header, Pax } from 'tar';

const BLOCK = 512;

/**
 * gzip level of archives: 1. Measured with bench:backup on a 225 MB Postgres and 1,000 apps: level 6 took
 * 7.97 s for a 75.7 MB archive, level 1 5.17 s for 79.4 MB (+5 % size, -35 % time); most of the bytes are
 * the service data directories, which compress little better at higher levels.
 */
export const GZIP_LEVEL = 1;
const CHUNK = 1024 * 1024;

type EntryType = 'File' | 'Directory' | 'SymbolicLink';

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

  private async header(name: string, type: EntryType, mode: number, size: number, mtime: Date, linkpath?: string) {
    const data = { path: name, type, mode, size, mtime, uid: 0, gid: 0, linkpath };
    const h = new Header(data);
    if (h.encode()) await this.write(new Pax({ path: name, linkpath, size, mtime }).encode());
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

  async addDir(name: string, mode = 0o700, mtime = new Date()) {
    await this.header(name.endsWith('/') ? name : `${name}/`, 'Directory', mode, 0, mtime);
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
      await this.header(name, 'File', st.mode & 0o7777, st.size, st.mtime);
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
   * A directory tree from disk under `name`: directories, regular files and symbolic links; sockets, FIFOs
   * and devices are skipped, entries that vanish meanwhile too. `skip` leaves out top-level names.
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
      await this.addDir(name, st.mode & 0o7777, st.mtime);
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
      if (target !== undefined) await this.header(name, 'SymbolicLink', 0o777, 0, st.mtime, target);
    }
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
