// The `relay.sock` link on an edge node's disk (docs/design.md "Edge nodes (issue 19)", "Two relays,
// swapped"): the node's Caddy dials it, it names the node's active relay. The daemon cannot rename a file
// there, so it reads and writes the link with the engine's archive endpoint on a container of that node that
// mounts the volume (the node's agent itself), through the manager's relay and that agent: GET of the link
// (a tar of the link itself, empty for the socket file of the single relay of before), PUT of a tar holding
// one symlink entry. The engine unpacks it by removing the old entry, then creating the new one: a dial in
// that instant gets ENOENT, and the node's Caddy retries it (try_duration): not atomic, but no request lost.
import { request } from 'node:http';
import { Header } from 'tar';
import { AGENT_DIAL_HEADER, AGENT_KEY_HEADER } from '../runtime/swarm-agent-spec.js';
import { EDGE_NODE_DIR, EDGE_NODE_LINK } from '../runtime/swarm-edge-spec.js';

const NAME = /^[A-Za-z0-9._-]+$/;
const plainName = (s: string, what: string) => {
  if (!NAME.test(s) || s === '.' || s === '..' || s.length > 100) throw new Error(`"${s.slice(0, 80)}" is not a plain ${what}`);
  return s;
};

/** Pure: a tar holding one symlink `name` -> `target` (both plain base names: a relative link in the same directory). */
export function symlinkTar(name: string, target: string): Buffer {
  const h = new Header({ path: plainName(name, 'file name'), type: 'SymbolicLink', linkpath: plainName(target, 'link target'), mode: 0o777, size: 0, mtime: new Date(0), uid: 0, gid: 0 });
  h.encode();
  return Buffer.concat([h.block!, Buffer.alloc(1024)]);
}

/** Pure: the target of the symlink `name` in a tar (the engine's archive of one path); undefined when it holds none (a socket file is left out of a tar). */
export function linkTargetOf(tar: Buffer, name: string): string | undefined {
  for (let at = 0; at + 512 <= tar.length; ) {
    const block = tar.subarray(at, at + 512);
    if (block.every((b) => b === 0)) return undefined;
    const h = new Header(block);
    if (!h.cksumValid) throw new Error('the engine answered a tar with a bad header checksum');
    if (h.type === 'SymbolicLink' && h.path === name) return h.linkpath;
    at += 512 + Math.ceil((h.size ?? 0) / 512) * 512;
  }
  return undefined;
}

/** Where one edge node's link is reached: its agent's task address and the container (the agent's) that mounts the volume. */
export interface EdgeLinkTarget {
  hostname: string;
  agent?: string;
  container?: string;
}

export interface EdgeNodeLink {
  /** The link's target (`relay-a.sock`); undefined when there is no link (nothing there, or the socket of before). */
  read(t: EdgeLinkTarget): Promise<string | undefined>;
  /** Points the link at `target` (a base name in the volume). */
  point(t: EdgeLinkTarget, target: string): Promise<void>;
}

/** The engine of an edge node, through the manager relay's agent socket and the node's agent. */
export function createEdgeNodeLink(o: { agentSocket: string; key: string; timeoutMs?: number }): EdgeNodeLink {
  const call = (t: EdgeLinkTarget, method: 'GET' | 'PUT', path: string, body?: Buffer) =>
    new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      if (!t.agent || !t.container) return reject(new Error(`the agent of edge node ${t.hostname} is not running`));
      const req = request(
        {
          socketPath: o.agentSocket,
          path: `/containers/${encodeURIComponent(t.container)}/archive?path=${encodeURIComponent(path)}`,
          method,
          // A new connection per call, as the admin calls (edge-admin.ts): the manager's relays are swapped.
          agent: false,
          headers: { host: 'docker', [AGENT_DIAL_HEADER]: t.agent, [AGENT_KEY_HEADER]: o.key, ...(body ? { 'content-type': 'application/x-tar', 'content-length': body.length } : {}) },
          timeout: o.timeoutMs ?? 5000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`the engine of edge node ${t.hostname} did not answer within ${o.timeoutMs ?? 5000} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  const failed = (t: EdgeLinkTarget, what: string, res: { status: number; body: Buffer }) =>
    new Error(`${what} on edge node ${t.hostname}: HTTP ${res.status} ${res.body.toString('utf8').trim().slice(0, 200)}`);

  return {
    async read(t) {
      const res = await call(t, 'GET', `${EDGE_NODE_DIR}/${EDGE_NODE_LINK}`);
      if (res.status === 200) return linkTargetOf(res.body, EDGE_NODE_LINK);
      // No such file: no link yet. No such container (the agent's task was replaced): an error, never "no link".
      if (res.status === 404 && /could not find the file/i.test(res.body.toString('utf8'))) return undefined;
      throw failed(t, 'reading the relay link', res);
    },
    async point(t, target) {
      const res = await call(t, 'PUT', EDGE_NODE_DIR, symlinkTar(EDGE_NODE_LINK, target));
      if (res.status !== 200) throw failed(t, 'swapping the relay link', res);
    },
  };
}
