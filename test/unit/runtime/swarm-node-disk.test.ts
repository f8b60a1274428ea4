// Pure parts of another node's disk (src/runtime/swarm-node-disk.ts): paths stay inside the data directory,
// the helper is one task pinned to the node, never restarted, mounting the node's `/` (the data directory
// may not exist there yet) at a fixed path, small files go as a one-entry tar with their mode.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { describe, expect, it } from 'vitest';
import { diskHelperSpec, diskPath, helperPath, mkdirArgs, oneFileTar, ownArgs } from '../../../src/runtime/swarm-node-disk.js';

describe('diskPath', () => {
  it.each(['services', 'services/pg', '.restore-3-node/previous-services'])('%s is inside the data dir', (rel) => {
    expect(diskPath('/srv/svc', rel)).toBe(`/srv/svc/${rel}`);
  });
  it.each(['', '/etc', '../x', 'services/../..', 'a//b', 'a/./b', 'a b', 'a;rm'])('%j is refused', (rel) => {
    expect(() => diskPath('/srv/svc', rel)).toThrow(/not a plain path inside the data directory/);
  });
});

describe('diskHelperSpec', () => {
  it("is busybox sleeping on the node, the node's / mounted at a fixed path, restart policy none, labelled as ours", () => {
    const s = diskHelperSpec({ instance: 'svc', tag: 'restore-4', image: 'reg/probe:1', node: 'n2', dataDir: '/srv/svc' });
    expect(s.Name).toBe('svc-disk-restore-4');
    expect(s.Labels).toEqual({ 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'disk' });
    expect(s.TaskTemplate.ContainerSpec).toMatchObject({ Image: 'reg/probe:1', Command: ['/bin/busybox', 'sleep', '2147483647'], Mounts: [{ Type: 'bind', Source: '/', Target: '/svc-node-root' }] });
    expect(s.TaskTemplate.Placement.Constraints).toEqual(['node.id==n2']);
    expect(s.TaskTemplate.RestartPolicy.Condition).toBe('none');
  });
});

describe('ownArgs', () => {
  it('chown the path itself (never -R) to a numeric owner, the group when given; anything else is refused (issue 35)', () => {
    expect(ownArgs('/srv/svc', 'services/cache', 1001, 0)).toEqual(['chown', '1001:0', '/svc-node-root/srv/svc/services/cache']);
    expect(ownArgs('/srv/svc', 'services/cache', 1001, undefined)).toEqual(['chown', '1001', '/svc-node-root/srv/svc/services/cache']);
    expect(() => ownArgs('/srv/svc', 'services/cache', -1, 0)).toThrow(/not a numeric owner/);
    expect(() => ownArgs('/srv/svc', 'services/cache', 1.5, 0)).toThrow(/not a numeric owner/);
    expect(() => ownArgs('/srv/svc', '../etc', 1001, 0)).toThrow(/not a plain path/);
  });
});

describe('helperPath and mkdirArgs', () => {
  it("name a path under the data directory through the helper's mount of /", () => {
    expect(helperPath('/srv/svc', 'services/pg')).toBe('/svc-node-root/srv/svc/services/pg');
    expect(() => helperPath('/srv/svc', '../etc')).toThrow(/not a plain path/);
  });
  it('make the data directory and every level of the path with mode 700, each an argument of its own', () => {
    expect(mkdirArgs('/srv/svc', 'services/pg')).toEqual([
      'mkdir', '-p', '-m', '700', '/svc-node-root/srv/svc', '/svc-node-root/srv/svc/services', '/svc-node-root/srv/svc/services/pg',
    ]);
    expect(() => mkdirArgs('/srv/svc', 'services/../..')).toThrow(/not a plain path/);
  });
});

describe('oneFileTar', () => {
  it('holds one file with its content and mode, owned by root', async () => {
    const seen: { path: string; mode?: number; uid?: number; body: string }[] = [];
    await pipeline(
      Readable.from([oneFileTar('garage.toml', 'rpc_secret = "x"\n', 0o600)]),
      tar.t({
        onReadEntry: (e) => {
          const chunks: Buffer[] = [];
          e.on('data', (c: Buffer) => chunks.push(c));
          e.on('end', () => seen.push({ path: e.path, mode: e.mode, uid: e.uid, body: Buffer.concat(chunks).toString() }));
        },
      }) as unknown as NodeJS.WritableStream,
    );
    expect(seen).toEqual([{ path: 'garage.toml', mode: 0o600, uid: 0, body: 'rpc_secret = "x"\n' }]);
  });
  it.each(['', '.', '..', 'a/b', 'a b'])('refuses %j as a file name', (name) => {
    expect(() => oneFileTar(name, 'x', 0o600)).toThrow(/not a plain file name/);
  });
});
