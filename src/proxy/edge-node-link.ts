// The `relay.sock` link on an edge node's disk (docs/decisions/0043-edge-nodes.md): the node's Caddy dials it, it names the node's active relay. Through the manager's relay and
// the node's agent, with the engine's endpoints on containers of that node that mount the volume: the link is
// read with the archive endpoint (a tar of the link itself, empty for the socket file of the single relay of
// before) in the agent's container; a new link `relay.sock.new` is written with a PUT of a tar holding one
// symlink entry, then renamed over `relay.sock` by an exec of busybox `mv` in the node's swapper (rename(2):
// atomic). The archive PUT alone is not: the engine removes the old entry before creating the new one, and a
// POST whose dial lands in between fails (Caddy 2.6 retries the dial with the request body already closed).
// Only a node without a link yet (nothing dials it) gets its first link by the PUT alone.
import { Header } from 'tar';
import { socketRequest } from './socket-request.js';
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

/** Where one edge node's link is reached: its agent's task address, the agent's container and the swapper's (both mount the volume). */
export interface EdgeLinkTarget {
  hostname: string;
  agent?: string;
  container?: string;
  swapper?: string;
}

export interface EdgeNodeLink {
  /** The link's target (`relay-a.sock`); undefined when there is no link (nothing there, or the socket of before). */
  read(t: EdgeLinkTarget): Promise<string | undefined>;
  /**
   * Points the link at `target` (a base name in the volume): renamed over the old one in the swapper; `first`
   * (no link there yet: nothing dials it) without the swapper if it does not run yet.
   */
  point(t: EdgeLinkTarget, target: string, first: boolean): Promise<void>;
}

/** The new link's name beside `relay.sock`, renamed over it. */
const NEW_LINK = `${EDGE_NODE_LINK}.new`;
/** How long an exec of `mv` may take before the swap is given up (the next look tries again). */
const EXEC_WAIT_MS = 3000;

/** The engine of an edge node, through the manager relay's agent socket and the node's agent. */
export function createEdgeNodeLink(o: { agentSocket: string; key: string; timeoutMs?: number }): EdgeNodeLink {
  const call = async (t: EdgeLinkTarget, method: 'GET' | 'PUT' | 'POST', path: string, body?: Buffer, type = 'application/x-tar') => {
    if (!t.agent || !t.container) throw new Error(`the agent of edge node ${t.hostname} is not running`);
    const timeoutMs = o.timeoutMs ?? 5000;
    return socketRequest({
      socketPath: o.agentSocket,
      path,
      method,
      headers: { host: 'docker', [AGENT_DIAL_HEADER]: t.agent, [AGENT_KEY_HEADER]: o.key, ...(body ? { 'content-type': type } : {}) },
      body,
      timeoutMs,
      timedOut: () => new Error(`the engine of edge node ${t.hostname} did not answer within ${timeoutMs} ms`),
    });
  };
  const failed = (t: EdgeLinkTarget, what: string, res: { status: number; body: Buffer }) =>
    new Error(`${what} on edge node ${t.hostname}: HTTP ${res.status} ${res.body.toString('utf8').trim().slice(0, 200)}`);
  const archive = (container: string, path: string) => `/containers/${encodeURIComponent(container)}/archive?path=${encodeURIComponent(path)}`;
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));

  /** `mv -f relay.sock.new relay.sock` in the swapper (detached exec, its exit code polled, bounded). */
  const rename = async (t: EdgeLinkTarget, swapper: string) => {
    const cmd = ['/bin/busybox', 'mv', '-f', `${EDGE_NODE_DIR}/${NEW_LINK}`, `${EDGE_NODE_DIR}/${EDGE_NODE_LINK}`];
    const made = await call(t, 'POST', `/containers/${encodeURIComponent(swapper)}/exec`, json({ Cmd: cmd, AttachStdout: false, AttachStderr: false }), 'application/json');
    if (made.status !== 201) throw failed(t, 'creating the link swap', made);
    const id = (JSON.parse(made.body.toString('utf8')) as { Id: string }).Id;
    if (!/^[0-9a-f]{64}$/.test(id)) throw new Error(`the engine of edge node ${t.hostname} answered an exec id that is not one`);
    const started = await call(t, 'POST', `/exec/${id}/start`, json({ Detach: true, Tty: false }), 'application/json');
    if (started.status !== 200 && started.status !== 204) throw failed(t, 'starting the link swap', started);
    const until = Date.now() + EXEC_WAIT_MS;
    for (;;) {
      const res = await call(t, 'GET', `/exec/${id}/json`);
      if (res.status !== 200) throw failed(t, 'asking about the link swap', res);
      const doc = JSON.parse(res.body.toString('utf8')) as { Running?: boolean; ExitCode?: number | null };
      if (!doc.Running && doc.ExitCode !== null && doc.ExitCode !== undefined) {
        if (doc.ExitCode !== 0) throw new Error(`the link swap (busybox mv) on edge node ${t.hostname} exited ${doc.ExitCode}`);
        return;
      }
      if (Date.now() >= until) throw new Error(`the link swap on edge node ${t.hostname} did not end within ${EXEC_WAIT_MS} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  return {
    async read(t) {
      if (!t.container) throw new Error(`the agent of edge node ${t.hostname} is not running`);
      const res = await call(t, 'GET', archive(t.container, `${EDGE_NODE_DIR}/${EDGE_NODE_LINK}`));
      if (res.status === 200) return linkTargetOf(res.body, EDGE_NODE_LINK);
      // No such file: no link yet. No such container (the agent's task was replaced): an error, never "no link".
      if (res.status === 404 && /could not find the file/i.test(res.body.toString('utf8'))) return undefined;
      throw failed(t, 'reading the relay link', res);
    },
    async point(t, target, first) {
      if (!t.swapper) {
        if (!first) throw new Error(`the swapper of edge node ${t.hostname} is not running yet: its relay link is swapped once it runs`);
        const res = await call(t, 'PUT', archive(t.container ?? '', EDGE_NODE_DIR), symlinkTar(EDGE_NODE_LINK, target));
        if (res.status !== 200) throw failed(t, 'writing the relay link', res);
        return;
      }
      const res = await call(t, 'PUT', archive(t.swapper, EDGE_NODE_DIR), symlinkTar(NEW_LINK, target));
      if (res.status !== 200) throw failed(t, 'writing the new relay link', res);
      await rename(t, t.swapper);
    },
  };
}
