// The message a start (or a deploy, or a service) gives when the engine has no address pool left.
import { describe, expect, it } from 'vitest';
import { poolAdvice, POOL_EXHAUSTED_RE, unusedSvcNetworks, type NetworkFact } from '../../../src/runtime/pool-advice.js';

const svcNet = (name: string, containers: number, instance = name): NetworkFact => ({ name, containers, labels: { 'svc.managed': 'true', 'svc.instance': instance } });

describe('address pool exhausted', () => {
  it("recognises the engine's message", () => {
    expect(POOL_EXHAUSTED_RE.test('Error response from daemon: could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network')).toBe(true);
    expect(POOL_EXHAUSTED_RE.test('network with name svc already exists')).toBe(false);
  });

  it('names the svc networks no container uses, never its own, a used one or a foreign one, and the command to run', () => {
    const networks = [svcNet('svc-b2', 0), svcNet('svc-a1', 0), svcNet('svc-live', 2), svcNet('svc-new', 0), { name: 'other', containers: 0, labels: {} }];
    expect(unusedSvcNetworks(networks, 'svc-new').map((n) => n.name)).toEqual(['svc-a1', 'svc-b2']);
    const text = poolAdvice(networks, 'svc-new');
    expect(text).toContain('no free address pool left for network svc-new');
    expect(text).toContain('2 svc networks have no container');
    expect(text).toContain('`docker network rm svc-a1 svc-b2`');
    expect(text).toContain('svc uninstall');
    expect(text).not.toMatch(/svc-live|\bother\b/);
  });

  it('with no unused svc network, says where else room comes from', () => {
    const text = poolAdvice([svcNet('svc-live', 1)], 'svc-new');
    expect(text).toContain('No unused svc network was found');
    expect(text).toContain('docker network prune');
    expect(text).toContain('default-address-pools');
    expect(text).not.toContain('docker network rm svc-live');
  });
});
