// Pure parts of another node's disk for a restore (src/runtime/swarm-node-disk.ts): paths stay inside the
// data directory, the helper is one task pinned to the node, never restarted, mounting only the data dir.
import { describe, expect, it } from 'vitest';
import { diskHelperSpec, diskPath } from '../../../src/runtime/swarm-node-disk.js';

describe('diskPath', () => {
  it.each(['services', 'services/pg', '.restore-3-node/previous-services'])('%s is inside the data dir', (rel) => {
    expect(diskPath('/srv/svc', rel)).toBe(`/srv/svc/${rel}`);
  });
  it.each(['', '/etc', '../x', 'services/../..', 'a//b', 'a/./b', 'a b', 'a;rm'])('%j is refused', (rel) => {
    expect(() => diskPath('/srv/svc', rel)).toThrow(/not a plain path inside the data directory/);
  });
});

describe('diskHelperSpec', () => {
  it('is busybox sleeping on the node, the data dir mounted at its own path, restart policy none, labelled as ours', () => {
    const s = diskHelperSpec({ instance: 'svc', tag: 'restore-4', image: 'reg/probe:1', node: 'n2', dataDir: '/srv/svc' });
    expect(s.Name).toBe('svc-disk-restore-4');
    expect(s.Labels).toEqual({ 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'disk' });
    expect(s.TaskTemplate.ContainerSpec).toMatchObject({ Image: 'reg/probe:1', Command: ['/bin/busybox', 'sleep', '2147483647'], Mounts: [{ Type: 'bind', Source: '/srv/svc', Target: '/srv/svc' }] });
    expect(s.TaskTemplate.Placement.Constraints).toEqual(['node.id==n2']);
    expect(s.TaskTemplate.RestartPolicy.Condition).toBe('none');
  });
});
