// svc's own registry (SVC_RUNTIME=swarm without SVC_REGISTRY): Debian's docker-registry started detached
// under the guard with its storage in the data directory, answering, not started twice, an image pushed to
// it by the machine's engine (a loopback registry needs no TLS), and stopped by uninstall's helper.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureOwnRegistry, REGISTRY_BINARY, stopOwnRegistry } from '../../src/cluster/registry.js';
import { pidsWithArg } from '../../src/proxy/detached.js';
import { freePort } from '../support/caddy.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';

let dataDir: string;
let port: number;
const docker = (args: string[]) => execFileSync('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();

beforeAll(async () => {
  await ensureTestImages();
  dataDir = await mkdtemp(join(tmpdir(), 'svc-own-registry-'));
  port = await freePort();
});

afterAll(async () => {
  await stopOwnRegistry(dataDir);
  await rm(dataDir, { recursive: true, force: true });
});

describe.skipIf(!existsSync(REGISTRY_BINARY))("svc's own registry", () => {
  it('starts once, stores under the data directory, takes a push, stops', async () => {
    const at = await ensureOwnRegistry({ dataDir, address: '127.0.0.1', port });
    expect(at).toBe(`127.0.0.1:${port}`);
    const config = join(dataDir, 'registry', 'config.yml');
    const before = pidsWithArg(config).length;
    expect(before).toBeGreaterThan(0);
    expect(await ensureOwnRegistry({ dataDir, address: '127.0.0.1', port })).toBe(at);
    expect(pidsWithArg(config).length).toBe(before); // not started twice

    const ref = `${at}/svc-build/own-registry-test:1`;
    docker(['tag', WEB_V1, ref]);
    try {
      docker(['push', ref]);
    } finally {
      docker(['rmi', ref]);
    }
    expect(readdirSync(join(dataDir, 'registry', 'data', 'docker', 'registry', 'v2', 'repositories', 'svc-build'))).toEqual(['own-registry-test']);

    expect(await stopOwnRegistry(dataDir)).toBe(true);
    expect(pidsWithArg(config)).toEqual([]);
  });

  it('refuses an address that is not an IP', async () => {
    await expect(ensureOwnRegistry({ dataDir, address: 'evil; rm -rf /', port })).rejects.toThrow(/not an IP address/);
  });
});
