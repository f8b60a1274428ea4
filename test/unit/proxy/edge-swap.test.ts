// The pure decisions of the manager's two relays (src/proxy/edge-swap.ts): which relay a config goes to, and
// what the `relay.sock` link says.
import { describe, expect, it } from 'vitest';
import { activeFromLink, inFlight, otherRelay, planRelayLoad, type RelayLook } from '../../../src/proxy/edge-swap.js';

const L = (a: Partial<RelayLook>, b: Partial<RelayLook>) => ({ a: { up: true, has: false, ...a }, b: { up: true, has: false, ...b } });

describe('the active relay from the link', () => {
  it('relay-a.sock / relay-b.sock name one; anything else (no link, an old socket, a foreign target) none', () => {
    expect(activeFromLink('relay-a.sock')).toBe('a');
    expect(activeFromLink('relay-b.sock')).toBe('b');
    for (const t of [undefined, '', 'relay.sock', '/var/lib/svc/edge/relay-a.sock', 'relay-c.sock']) expect(activeFromLink(t)).toBeUndefined();
    expect(otherRelay('a')).toBe('b');
    expect(otherRelay('b')).toBe('a');
  });
});

describe('which relay a config goes to', () => {
  it('the active one already has it: nothing loaded, nothing swapped', () => {
    expect(planRelayLoad('a', L({ has: true }, {}))).toEqual({ kind: 'use', relay: 'a', load: false, waitIdle: false, inPlace: false });
  });

  it('a new config goes to the standby, after its old requests ended; then the link swaps to it', () => {
    expect(planRelayLoad('a', L({}, {}))).toEqual({ kind: 'use', relay: 'b', load: true, waitIdle: true, inPlace: false });
    expect(planRelayLoad('b', L({}, {}))).toEqual({ kind: 'use', relay: 'a', load: true, waitIdle: true, inPlace: false });
  });

  it('a flip-back to what the standby still has: only the link swaps', () => {
    expect(planRelayLoad('a', L({}, { has: true }))).toEqual({ kind: 'use', relay: 'b', load: false, waitIdle: false, inPlace: false });
  });

  it('the standby is down: the active one is reloaded in place (the switch must serve the new addresses)', () => {
    expect(planRelayLoad('a', L({}, { up: false }))).toEqual({ kind: 'use', relay: 'a', load: true, waitIdle: false, inPlace: true });
  });

  it('the active one is down: the standby is loaded and pointed at, no wait', () => {
    expect(planRelayLoad('a', L({ up: false }, {}))).toEqual({ kind: 'use', relay: 'b', load: true, waitIdle: true, inPlace: false });
  });

  it('no link (first start, or the socket of the single relay of before): one that has it, else A, else B', () => {
    expect(planRelayLoad(undefined, L({}, { has: true }))).toEqual({ kind: 'use', relay: 'b', load: false, waitIdle: false, inPlace: false });
    expect(planRelayLoad(undefined, L({}, {}))).toEqual({ kind: 'use', relay: 'a', load: true, waitIdle: true, inPlace: false });
    expect(planRelayLoad(undefined, L({ up: false }, {}))).toEqual({ kind: 'use', relay: 'b', load: true, waitIdle: false, inPlace: false });
  });

  it('neither answers: down (the caller keeps the addresses for when one runs)', () => {
    expect(planRelayLoad('a', L({ up: false }, { up: false }))).toEqual({ kind: 'down' });
    expect(planRelayLoad(undefined, L({ up: false }, { up: false }))).toEqual({ kind: 'down' });
  });
});

describe("a standby's requests in flight", () => {
  it("counts task addresses only, not the agent server's placeholder dial", () => {
    expect(inFlight([])).toBe(0);
    expect(inFlight([{ address: '10.0.1.9:3000', num_requests: 2 }, { address: '10.0.1.10:3000' }, { address: '{http.request.header.Svc-Agent-Dial}', num_requests: 1 }, { num_requests: 5 }])).toBe(2);
  });
});
