import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { BRIDGE_RETRANS_MS, bridgeInterface, tuneBridgeNeighbours } from '../../../src/runtime/bridge-neighbours.js';

const ID = '85829054a33b2f0c9d1e0a6b7c8d9e0f85829054a33b2f0c9d1e0a6b7c8d9e0f';
let root: string | undefined;
afterEach(() => root && rmSync(root, { recursive: true, force: true }));

describe('bridgeInterface', () => {
  it.each([
    [{ Id: ID, Driver: 'bridge' }, 'br-85829054a33b'],
    [{ Id: ID, Driver: 'bridge', Options: { 'com.docker.network.bridge.name': 'docker0' } }, 'docker0'],
    [{ Id: ID, Driver: 'overlay' }, undefined],
    [{ Id: ID, Options: { 'com.docker.network.bridge.name': '../../etc/x' } }, undefined],
    [{ Id: ID, Options: { 'com.docker.network.bridge.name': 'a-name-longer-than-15' } }, undefined],
    [{ Id: ID, Options: { 'com.docker.network.bridge.name': '..' } }, undefined],
  ])('%j -> %s', (net, want) => expect(bridgeInterface(net)).toBe(want));
});

describe('tuneBridgeNeighbours', () => {
  it("writes the retry interval into the bridge's neigh settings, and carries on when it cannot", async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-proc-'));
    const dir = join(root, 'sys/net/ipv4/neigh/br-85829054a33b');
    mkdirSync(dir, { recursive: true });
    await tuneBridgeNeighbours({ Id: ID, Driver: 'bridge' }, silentLogger, root);
    expect(readFileSync(join(dir, 'retrans_time_ms'), 'utf8')).toBe(String(BRIDGE_RETRANS_MS));
    await expect(tuneBridgeNeighbours({ Id: 'ffff' + ID.slice(4), Driver: 'bridge' }, silentLogger, root)).resolves.toBeUndefined();
  });
});
