// A fetch onto the overlay through the edge relay (docs/decisions/0042-service-data-on-other-nodes.md: Garage on a
// Swarm). The daemon's host is not on the instance's overlay, so `http://<task address>:3903/...` (Garage's
// admin API, the bucket and key setup) does not connect from here on any node, the manager's included. The
// relay's agent server dials the address named by `Svc-Agent-Dial` when it is an IPv4 address at an allowed
// port (agent-server.ts): the request goes there over the relay's unix socket (socket-request.ts),
// a new connection each time (the relay reloads).
import { socketRequest } from './socket-request.js';
import { AGENT_DIAL_HEADER } from '../runtime/swarm-agent-spec.js';

export type RelayFetch = (url: string, init?: RequestInit) => Promise<Response>;

/** Pure: the relay's request for `url` (`http://<IPv4>:<port>/path?q`), or a thrown error for anything else. */
export function relayRequest(url: string): { dial: string; path: string; host: string } {
  const u = new URL(url);
  if (u.protocol !== 'http:' || !/^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(u.hostname) || !u.port) {
    throw new Error(`the edge relay only reaches http://<IPv4 address>:<port> on the overlay, not ${u.protocol}//${u.host}`);
  }
  return { dial: `${u.hostname}:${u.port}`, path: `${u.pathname}${u.search}`, host: u.host };
}

/** A fetch whose requests the relay at `socketPath` makes on the overlay; status and body as they come back. */
export function createRelayFetch(socketPath: string): RelayFetch {
  return async (url, init) => {
    const { dial, path, host } = relayRequest(url);
    const body = init?.body === undefined || init.body === null ? undefined : String(init.body);
    const headers: Record<string, string> = { ...(init?.headers as Record<string, string> | undefined), host, [AGENT_DIAL_HEADER]: dial };
    try {
      const res = await socketRequest({ socketPath, path, method: init?.method ?? 'GET', headers, body, signal: init?.signal ?? undefined });
      const status = res.status || 502;
      return new Response(status === 204 || status === 304 ? null : res.body, { status });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ECONNREFUSED') throw new Error(`the edge relay, svc's way onto the overlay, is not running yet (${socketPath})`);
      throw err;
    }
  };
}
