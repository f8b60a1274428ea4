// Which TCP ports something on this host listens on, read from the kernel's socket tables
// (/proc/net/tcp and tcp6) of the daemon's network namespace, which is the proxy's too: svc runs on the
// host network, Caddy as a host process or a host-network container. Reading never binds, so a check
// can never steal a port from a Caddy load under way, and it is synchronous (commands are).
import { readFileSync } from 'node:fs';

const LISTEN = '0A';

/** Pure: the local ports in LISTEN state in one /proc/net/tcp{,6} table, each with its socket count. */
export function parseListening(table: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 4 || cols[3] !== LISTEN) continue;
    const port = parseInt(cols[1].slice(cols[1].lastIndexOf(':') + 1), 16);
    if (Number.isInteger(port)) out.set(port, (out.get(port) ?? 0) + 1);
  }
  return out;
}

/** Listening sockets per port on this host; undefined when the tables cannot be read (not Linux). */
export function listeningSockets(tables = ['/proc/net/tcp', '/proc/net/tcp6']): Map<number, number> | undefined {
  const all = new Map<number, number>();
  let read = false;
  for (const t of tables) {
    let text: string;
    try {
      text = readFileSync(t, 'utf8');
    } catch {
      continue; // no IPv6 table on a host without IPv6
    }
    read = true;
    for (const [port, n] of parseListening(text)) all.set(port, (all.get(port) ?? 0) + n);
  }
  return read ? all : undefined;
}

/** The ports something listens on; undefined when svc cannot tell. */
export function listeningPorts(): ReadonlySet<number> | undefined {
  const s = listeningSockets();
  return s && new Set(s.keys());
}
