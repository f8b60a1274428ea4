import { describe, expect, it } from 'vitest';
import { networkUsers } from '../../../src/cli/uninstall-network.js';

// The Containers map of `docker network inspect` on a Swarm manager, as the engine reports it (29.x / 20.10):
// the overlay's load-balancer endpoint stays there after the last container of the node left.
const lb = { 'lb-svc-net': { Name: 'svc-net-endpoint', EndpointID: 'c698', IPv4Address: '10.0.1.5/24' } };

describe('networkUsers (svc uninstall)', () => {
  it("does not count the overlay's load-balancer endpoint as a user", () => {
    expect(networkUsers('svc-net', lb)).toEqual([]);
    expect(networkUsers('svc-net', null)).toEqual([]);
    expect(networkUsers('svc-net', undefined)).toEqual([]);
  });

  it('counts every real container, the edge relay or one of another program', () => {
    const map = { ...lb, e9bb6835: { Name: 'svc-edge' }, '48b84dea': { Name: 'someone-else' } };
    expect(networkUsers('svc-net', map)).toEqual(['svc-edge', 'someone-else']);
  });

  it("counts a container merely named like the endpoint, and another network's endpoint", () => {
    expect(networkUsers('svc-net', { '48b84dea': { Name: 'svc-net-endpoint' } })).toEqual(['svc-net-endpoint']);
    expect(networkUsers('svc-net', { 'lb-other': { Name: 'other-endpoint' } })).toEqual(['other-endpoint']);
  });
});
