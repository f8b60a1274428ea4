// Edge nodes exist only on a Swarm (docs/decisions/0043-edge-nodes.md): wireRuntime makes their reconciler
// (`edges:main`) and the relayed edge only for SVC_RUNTIME=swarm; on one engine the proxy parts are used as they
// are and no Swarm key is registered. Nothing here talks to an engine (the clients connect on first use).
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/log.js';
import { directEdge } from '../../../src/proxy/edge-proxy.js';
import { wireRuntime } from '../../../src/wiring/runtime.js';

describe('wireRuntime and the edge nodes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wire-'));
  const config = (runtime: string) => parseConfig({ SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_RUNTIME: runtime, SVC_DATA_DIR: dir, DOCKER_HOST: 'unix:///nonexistent/docker.sock' });

  it('one engine: no edges reconciler, no agents, the parts as they are', () => {
    const w = wireRuntime(config('docker'), silentLogger);
    expect(w.edges).toBeUndefined();
    expect(w.agents).toBeUndefined();
    expect(w.edge).toBe(directEdge);
  });

  it('a Swarm: the edges:main key beside agents:main', async () => {
    const w = wireRuntime(config('swarm'), silentLogger);
    expect(w.edges?.kind).toBe('edges');
    expect(await w.edges!.listNames()).toEqual(['main']);
    expect(w.agents?.kind).toBe('agents');
    expect(w.edge).not.toBe(directEdge);
    rmSync(dir, { recursive: true, force: true });
  });
});
