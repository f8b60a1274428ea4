import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { ensureProxyContainer, planProxyContainer, proxyContainerSpec, SPEC_LABEL } from '../../../src/proxy/container.js';
import { silentLogger } from '../../../src/log.js';
import type { ContainerInfo } from '../../../src/runtime/runtime.js';

let dataDir: string | undefined;
afterEach(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

const base = { image: 'caddy:2', adminUrl: 'http://127.0.0.1:2019', dataDir: '/var/lib/svc', instance: 'svc' };

describe('proxyContainerSpec', () => {
  it('host network, caddy run --resume with a bootstrap config, data and config mounts, labels', () => {
    const s = proxyContainerSpec(base);
    expect(s).toMatchObject({
      name: 'svc-proxy',
      image: 'caddy:2',
      hostNetwork: true,
      entrypoint: ['/usr/bin/caddy'],
      cmd: ['run', '--resume', '--config', '/config/bootstrap.json'],
      mounts: [
        { source: '/var/lib/svc/proxy/data', target: '/data' },
        { source: '/var/lib/svc/proxy/config', target: '/config' },
      ],
      restart: 'unless-stopped',
      labels: { 'svc.managed': 'true', 'svc.instance': 'svc', 'svc.role': 'proxy' },
    });
  });

  it('another instance gets its own container name', () => {
    expect(proxyContainerSpec({ ...base, instance: 'test-a' }).name).toBe('test-a-proxy');
  });

  it('the spec hash changes with the image and the admin address, not otherwise', () => {
    const h = (o: Partial<typeof base>) => proxyContainerSpec({ ...base, ...o }).labels[SPEC_LABEL];
    expect(h({})).toBe(h({}));
    expect(h({ image: 'caddy:2.8' })).not.toBe(h({}));
    expect(h({ adminUrl: 'http://127.0.0.1:2020' })).not.toBe(h({}));
  });
});

describe('planProxyContainer', () => {
  const wanted = proxyContainerSpec(base);
  const found = (labels: Record<string, string>, running = true) => ({ labels, running }) as ContainerInfo;
  it.each([
    ['missing: create', undefined, 'create'],
    ['running with the same spec: nothing', found(wanted.labels), 'none'],
    ['stopped with the same spec: start', found(wanted.labels, false), 'start'],
    ['another spec: recreate', found({ ...wanted.labels, [SPEC_LABEL]: 'old' }), 'recreate'],
  ] as const)('%s', (_n, f, action) => expect(planProxyContainer(f, wanted)).toBe(action));

  it.each([
    ['not managed by svc', {}],
    ['another instance', { ...wanted.labels, 'svc.instance': 'other' }],
  ])('refuses a container %s', (_n, labels) => {
    expect(() => planProxyContainer(found(labels), wanted)).toThrow(/did not create/);
  });
});

describe('ensureProxyContainer on the fake runtime', () => {
  it('creates once, then does nothing; restarts a stopped one; recreates on a new image', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-proxy-'));
    const runtime = new FakeRuntime({ images: ['caddy:2'] });
    let readyCalls = 0;
    const o = { ...base, dataDir, runtime, log: silentLogger, waitReady: async () => (readyCalls++, true) };

    expect(await ensureProxyContainer(o)).toEqual({ action: 'create', changed: true });
    expect(JSON.parse(await readFile(join(dataDir, 'proxy/config/bootstrap.json'), 'utf8'))).toEqual({ admin: { listen: '127.0.0.1:2019' } });
    expect(await ensureProxyContainer(o)).toEqual({ action: 'none', changed: false });

    runtime.kill('svc-proxy');
    expect(await ensureProxyContainer(o)).toEqual({ action: 'start', changed: true });

    runtime.images.add('caddy:2.8');
    expect(await ensureProxyContainer({ ...o, image: 'caddy:2.8' })).toEqual({ action: 'recreate', changed: true });
    expect((await runtime.inspect('svc-proxy'))?.image).toBe('caddy:2.8');
    expect(readyCalls).toBe(3);
  });

  it('pulls a missing image and reports a failed pull with the setting name', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-proxy-'));
    const runtime = new FakeRuntime({ images: [] });
    runtime.pullFailures.set('*', 'registry unreachable');
    const err = await ensureProxyContainer({ ...base, dataDir, runtime, log: silentLogger }).catch((e: Error) => e);
    expect(String(err)).toMatch(/cannot pull the proxy image caddy:2 \(SVC_PROXY_IMAGE\): .*registry unreachable/);
  });

  it('fails when the admin API never answers', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-proxy-'));
    const runtime = new FakeRuntime({ images: ['caddy:2'] });
    const err = await ensureProxyContainer({ ...base, dataDir, runtime, log: silentLogger, waitReady: async () => false }).catch((e: Error) => e);
    expect(String(err)).toMatch(/admin API at http:\/\/127\.0\.0\.1:2019 does not answer/);
  });
});
