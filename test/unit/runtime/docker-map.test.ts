import { describe, expect, it } from 'vitest';
import { dockerOptions, limits, toContainerInfo, toCreateOptions, type InspectDoc } from '../../../src/runtime/docker-map.js';
import { engineError, engineMessage } from '../../../src/runtime/docker-errors.js';
import { toRuntimeEvent } from '../../../src/runtime/docker-events.js';

const doc = (over: Partial<InspectDoc['State']> = {}, nets: Record<string, { IPAddress: string }> = { svc: { IPAddress: '172.20.0.5' } }): InspectDoc => ({
  Id: 'abc',
  Name: '/web-1',
  Config: { Image: 'web:v1', Labels: { 'svc.app': 'web' } },
  State: { Status: 'running', Running: true, ExitCode: 0, StartedAt: '2024-01-01T00:00:00Z', FinishedAt: '0001-01-01T00:00:00Z', ...over },
  NetworkSettings: { IPAddress: '', Networks: nets },
});

describe('toContainerInfo', () => {
  it.each([
    ['running, no healthcheck', doc(), 'svc', { running: true, address: '172.20.0.5', health: 'none', exitCode: undefined, finishedAt: undefined }],
    ['healthy', doc({ Health: { Status: 'healthy' } }), 'svc', { health: 'healthy' }],
    ['unhealthy', doc({ Health: { Status: 'unhealthy' } }), 'svc', { health: 'unhealthy' }],
    ['other network asked', doc(), 'other', { address: undefined }],
    ['no network asked: first one', doc(), undefined, { address: '172.20.0.5' }],
    ['exited', doc({ Status: 'exited', Running: false, ExitCode: 1, FinishedAt: '2024-01-01T00:01:00Z' }), 'svc', { running: false, exitCode: 1, address: undefined, finishedAt: '2024-01-01T00:01:00Z' }],
    ['killed for memory', doc({ Status: 'exited', Running: false, ExitCode: 137, OOMKilled: true }), 'svc', { exitCode: 137, oomKilled: true }],
    ['killed otherwise', doc({ Status: 'exited', Running: false, ExitCode: 137, OOMKilled: false }), 'svc', { exitCode: 137, oomKilled: undefined }],
    ['start error', doc({ Status: 'created', Running: false, Error: 'port is already allocated' }), 'svc', { state: 'created', exitCode: undefined, error: 'port is already allocated' }],
  ])('%s', (_n, d, network, expected) => {
    const info = toContainerInfo(d, network);
    expect(info).toMatchObject({ id: 'abc', name: 'web-1', image: 'web:v1', labels: { 'svc.app': 'web' }, ...expected });
  });
});

describe('toCreateOptions', () => {
  it('joins the network with aliases, binds mounts, sets env, labels and restart policy', () => {
    const o = toCreateOptions({
      name: 'web-1',
      image: 'web:v1',
      env: { A: '1', B: 'x=y' },
      labels: { 'svc.managed': 'true' },
      network: 'svc',
      networkAliases: ['web'],
      mounts: [{ source: '/data/pg', target: '/var/lib/postgresql/data' }, { source: '/etc/x', target: '/x', readOnly: true }],
      restart: 'unless-stopped',
    });
    expect(o).toMatchObject({
      name: 'web-1',
      Image: 'web:v1',
      Env: ['A=1', 'B=x=y'],
      Labels: { 'svc.managed': 'true' },
      HostConfig: { NetworkMode: 'svc', Binds: ['/data/pg:/var/lib/postgresql/data', '/etc/x:/x:ro'], RestartPolicy: { Name: 'unless-stopped' } },
      NetworkingConfig: { EndpointsConfig: { svc: { Aliases: ['web'] } } },
    });
  });

  it('uses the host network without endpoint config, and no restarts by default', () => {
    const o = toCreateOptions({ name: 'caddy', image: 'caddy:2', labels: {}, network: 'svc', hostNetwork: true });
    expect(o.HostConfig).toMatchObject({ NetworkMode: 'host', RestartPolicy: { Name: 'no' } });
    expect(o.NetworkingConfig).toBeUndefined();
  });
});

describe('dockerOptions', () => {
  it.each([
    [undefined, undefined],
    ['unix:///run/docker.sock', { socketPath: '/run/docker.sock' }],
    ['tcp://10.0.0.1:2375', { protocol: 'http', host: '10.0.0.1', port: 2375 }],
    ['https://docker.example:2376', { protocol: 'https', host: 'docker.example', port: 2376 }],
  ])('%s', (host, expected) => {
    expect(dockerOptions(host)).toEqual(expected);
  });
});

describe('resource limits', () => {
  it.each([
    ['none', undefined, {}],
    ['nulls are unlimited', { memoryMb: null, cpus: null }, {}],
    ['memory: bytes, and no swap beyond the cap', { memoryMb: 256 }, { Memory: 268_435_456, MemorySwap: 268_435_456 }],
    ['half a core', { cpus: 0.5 }, { NanoCpus: 500_000_000 }],
    ['both', { memoryMb: 6, cpus: 2 }, { Memory: 6_291_456, MemorySwap: 6_291_456, NanoCpus: 2_000_000_000 }],
  ])('%s', (_n, r, expected) => {
    expect(limits(r)).toEqual(expected);
  });

  it('reach the create options; nonsense is refused before any request', () => {
    const o = toCreateOptions({ name: 'w', image: 'web:v1', labels: {}, resources: { memoryMb: 64, cpus: 0.25 } });
    expect(o.HostConfig).toMatchObject({ Memory: 67_108_864, MemorySwap: 67_108_864, NanoCpus: 250_000_000 });
    expect(toCreateOptions({ name: 'w', image: 'web:v1', labels: {} }).HostConfig).not.toHaveProperty('Memory');
    expect(() => limits({ memoryMb: 0 })).toThrow(/positive/);
    expect(() => limits({ cpus: Number.NaN })).toThrow(/positive/);
  });
});

describe('engine errors', () => {
  it('keeps the engine message and the status', () => {
    const raw = Object.assign(new Error('(HTTP code 404) no such container - No such container: web-9 '), {
      statusCode: 404,
      json: { message: 'No such container: web-9' },
    });
    expect(engineMessage(raw)).toBe('No such container: web-9');
    const e = engineError('start web-9', raw);
    expect(e.message).toBe('docker start web-9: No such container: web-9');
    expect(e.statusCode).toBe(404);
    expect(engineMessage(new Error('(HTTP code 500) server error - boom '))).toBe('boom');
    expect(engineError('ping', new Error('connect ENOENT /var/run/docker.sock')).message).toBe('docker ping: connect ENOENT /var/run/docker.sock');
  });
});

describe('toRuntimeEvent', () => {
  it('separates labels from the attributes the engine mixes in', () => {
    const ev = toRuntimeEvent({
      Type: 'container',
      Action: 'die',
      Actor: { ID: 'abc', Attributes: { name: 'web-1', image: 'web:v1', exitCode: '137', 'svc.app': 'web' } },
    });
    expect(ev).toEqual({ action: 'die', id: 'abc', name: 'web-1', labels: { 'svc.app': 'web' } });
    expect(toRuntimeEvent({ Type: 'network', Action: 'connect' })).toBeUndefined();
  });
  it("keeps a kill's signal and the engine's time (the app reconciler's kill notes compare it with start times)", () => {
    const ev = toRuntimeEvent({
      Type: 'container',
      Action: 'kill',
      timeNano: 1_795_579_006_380_309_300,
      Actor: { ID: 'abc', Attributes: { name: 'web-1', signal: '9', 'svc.app': 'web' } },
    } as never);
    expect(ev).toEqual({ action: 'kill', id: 'abc', name: 'web-1', labels: { 'svc.app': 'web' }, signal: '9', atMs: 1_795_579_006_380 });
  });
});
