// Pure: the manager relay's second server, the daemon's way onto the overlay (docs/decisions/0041-node-agents.md,
// 0042-service-data-on-other-nodes.md): a request naming an agent or a managed service's admin port goes to that
// task address. It rides in the relay's config (edge-config.ts) but is no part of the edge's routes.
import type { Json } from './config.js';
import { AGENT_DIAL_HEADER, AGENT_PORT } from '../runtime/swarm-agent-spec.js';
import { GARAGE_ADMIN_PORT } from '../catalog/garage.js';

/** Ports of managed services' admin APIs the daemon reaches on the overlay through the relay (Garage's). */
export const SERVICE_ADMIN_PORTS = [GARAGE_ADMIN_PORT];

/**
 * Pure: the relay's second server, on its own socket: a request naming an agent (`Svc-Agent-Dial: <IPv4 task
 * address>:2380`) goes to that address on the overlay, upgrades (an exec's hijacked stream) passed through;
 * so does one naming a managed service's admin port (`SERVICE_ADMIN_PORTS`); anything else is refused. The
 * key header goes on untouched: the agent checks it.
 */
export function agentServer(socket: string): Json {
  const ipv4At = (ports: string) => `^[0-9]{1,3}(\\.[0-9]{1,3}){3}:${ports}$`;
  return {
    listen: [`unix/${socket}`],
    automatic_https: { disable: true },
    routes: [
      dialRoute(ipv4At(String(AGENT_PORT))),
      // Managed services' admin APIs on the overlay (Garage's bucket and key setup): the daemon's host is not
      // on the overlay, so it calls them through here too (relay-fetch.ts). Only those ports.
      dialRoute(ipv4At(`(${SERVICE_ADMIN_PORTS.join('|')})`)),
      { handle: [{ handler: 'static_response', status_code: 403, body: 'svc edge: not an agent address\n' }], terminal: true },
    ],
  };
}

/** Pure: a route sending a request whose `Svc-Agent-Dial` matches `pattern` to that address, header removed. */
function dialRoute(pattern: string): Json {
  return {
    match: [{ header_regexp: { [AGENT_DIAL_HEADER]: { pattern } } }],
    handle: [
      {
        handler: 'reverse_proxy',
        upstreams: [{ dial: `{http.request.header.${AGENT_DIAL_HEADER}}` }],
        // An address that is gone costs one bounded dial, never a hang.
        transport: { protocol: 'http', dial_timeout: '3s' },
        headers: { request: { delete: [AGENT_DIAL_HEADER] } },
      },
    ],
    terminal: true,
  };
}
