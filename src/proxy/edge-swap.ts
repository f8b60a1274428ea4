// Pure: which of the manager's two relays a config goes to (docs/decisions/0039-two-relays-swapped.md). Caddy 2.6
// reloads a whole config at every load, and a request in flight on a server it shuts down can lose its
// connection before the host's Caddy finished writing the body (EPIPE): so a config is loaded into the relay
// that carries no traffic (the standby) and the `relay.sock` link is then swapped to it. Same input, same plan.
import { relaySocketName, RELAY_IDS, type RelayId } from './edge-config.js';

export const otherRelay = (id: RelayId): RelayId => (id === 'a' ? 'b' : 'a');

/** Pure: the active relay named by the `relay.sock` link's target; undefined for anything else (no link, a socket of the old layout). */
export function activeFromLink(target: string | undefined): RelayId | undefined {
  return RELAY_IDS.find((id) => target === relaySocketName(id));
}

/** What one look at a relay found: its admin API answers; it has exactly the wanted config. */
export interface RelayLook {
  up: boolean;
  has: boolean;
}

export type RelayPlan =
  | {
      kind: 'use';
      /** The relay the link must point at afterwards. */
      relay: RelayId;
      /** Load the wanted config into it first. */
      load: boolean;
      /** Wait (bounded) for its requests from before the previous swap to end before loading it. */
      waitIdle: boolean;
      /** The standby is down: the active relay is reloaded under traffic, as with one relay (rare race kept). */
      inPlace: boolean;
    }
  | { kind: 'down' };

/**
 * Pure: the plan for one wanted config. The active relay that already has it stays; else the standby (the
 * other one; A when no link names one) is loaded, or, when it already has it (a flip-back to the previous
 * addresses), only pointed at; a standby that is down leaves the active one to be loaded in place, because
 * a switch must not return before the new addresses are served; with neither up, nothing serves: `down`.
 */
export function planRelayLoad(active: RelayId | undefined, look: Record<RelayId, RelayLook>): RelayPlan {
  if (active && look[active].up && look[active].has) return { kind: 'use', relay: active, load: false, waitIdle: false, inPlace: false };
  if (!active) {
    const ready = RELAY_IDS.find((id) => look[id].up && look[id].has);
    if (ready) return { kind: 'use', relay: ready, load: false, waitIdle: false, inPlace: false };
  }
  const standby = active ? otherRelay(active) : 'a';
  if (look[standby].up) return { kind: 'use', relay: standby, load: !look[standby].has, waitIdle: !look[standby].has, inPlace: false };
  const other = otherRelay(standby);
  if (look[other].up) return { kind: 'use', relay: other, load: true, waitIdle: false, inPlace: active === other };
  return { kind: 'down' };
}

/** Pure: the in-flight requests that hold a standby's load: task addresses only (the agent server's dial is a placeholder). */
export function inFlight(upstreams: { address?: string; num_requests?: number }[]): number {
  return upstreams.reduce((n, u) => n + (u.address && !u.address.includes('{') ? (u.num_requests ?? 0) : 0), 0);
}

/** One entry of Caddy's `GET /reverse_proxy/upstreams` answer. */
export type UpstreamCount = { address?: string; num_requests?: number };

/** Pure: Caddy's upstreams answer; anything but a JSON list counts as none. */
export function parseUpstreams(text: string): UpstreamCount[] {
  try {
    const v = JSON.parse(text || 'null') as unknown;
    return Array.isArray(v) ? (v as UpstreamCount[]) : [];
  } catch {
    return [];
  }
}

/** Adds each address's in-flight requests to `out` (several relays' answers summed). */
export function addRequests(out: Map<string, number>, upstreams: UpstreamCount[]): Map<string, number> {
  for (const u of upstreams) if (u.address) out.set(u.address, (out.get(u.address) ?? 0) + (u.num_requests ?? 0));
  return out;
}
