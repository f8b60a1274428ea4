// svc's DNS responder: a UDP server that answers Caddy's dynamic-upstream lookups from an in-memory
// copy of the state file the daemon writes. It is in the request path once per refresh, so a query is
// answered from memory only; the file is re-read in the background when fs.watch on its directory fires
// or a periodic stat sees it changed. A bad or missing file keeps the last good records.
import { createSocket, type Socket } from 'node:dgram';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { answerFor, decodeQuery, encodeError, encodeResponse, normaliseRecords } from './records.js';

export interface ResponderOptions {
  stateFile: string;
  port: number;
  host?: string;
  /** Stat check interval (ms); the watcher usually reacts sooner. */
  statIntervalMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface Responder {
  /** The bound UDP port (useful with port 0). */
  port: number;
  /** Current records (for tests). */
  records(): ReadonlyMap<string, string>;
  /** Re-reads the state file now; resolves when done. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** Starts answering on host:port (default 127.0.0.1). Rejects when the port cannot be bound. */
export async function startResponder(opts: ResponderOptions): Promise<Responder> {
  const log = opts.log ?? (() => {});
  let records: ReadonlyMap<string, string> = new Map();
  let lastStat = '';
  let reloading: Promise<void> | undefined;
  let again = false;

  const readOnce = async () => {
    let key: string;
    try {
      const s = await stat(opts.stateFile);
      key = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log('cannot stat the state file', { error: String(err) });
      return;
    }
    if (key === lastStat) return;
    try {
      const next = normaliseRecords(JSON.parse(await readFile(opts.stateFile, 'utf8')));
      records = next;
      lastStat = key;
      log('records loaded', { count: next.size });
    } catch (err) {
      // A half-written file cannot happen with the daemon's rename, but a hand edit can: keep the last good.
      log('state file unreadable; keeping the last records', { error: String(err) });
      lastStat = key;
    }
  };
  // One read at a time; a change during a read triggers one more.
  const reload = (): Promise<void> => {
    if (reloading) {
      again = true;
      return reloading;
    }
    reloading = (async () => {
      do {
        again = false;
        await readOnce();
      } while (again);
    })().finally(() => (reloading = undefined));
    return reloading;
  };

  await reload();

  const socket: Socket = createSocket({ type: 'udp4' });
  socket.on('message', (msg, rinfo) => {
    const d = decodeQuery(msg);
    let reply: Buffer | undefined;
    if (d.ok) reply = encodeResponse(d.query, answerFor(d.query.question, records, opts.stateFile));
    else if (d.id !== undefined && d.rcode !== undefined) reply = encodeError(d.id, d.flags ?? 0, d.rcode);
    if (reply) socket.send(reply, rinfo.port, rinfo.address);
  });
  socket.on('error', (err) => log('socket error', { error: String(err) }));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(opts.port, opts.host ?? '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });

  let watcher: FSWatcher | undefined;
  const startWatch = () => {
    try {
      const name = basename(opts.stateFile);
      watcher = watch(dirname(opts.stateFile), (_ev, file) => {
        if (!file || file === name) void reload();
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined; // the stat check keeps working; try watching again on the next tick of it
      });
    } catch {
      watcher = undefined; // directory missing yet: the stat check covers it
    }
  };
  startWatch();
  const timer = setInterval(() => {
    if (!watcher) startWatch();
    void reload();
  }, opts.statIntervalMs ?? 1000);

  return {
    port: socket.address().port,
    records: () => records,
    reload,
    async close() {
      clearInterval(timer);
      watcher?.close();
      await new Promise<void>((r) => socket.close(() => r()));
    },
  };
}
