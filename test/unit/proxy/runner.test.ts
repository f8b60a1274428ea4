// SVC_PROXY_MODE=auto: which Caddy svc runs and why, against the fake engine.
import { describe, expect, it } from 'vitest';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { chooseProxyMode, createProxyRunner, type ProxyRunnerOptions } from '../../../src/proxy/runner.js';
import { silentLogger } from '../../../src/log.js';

const opts = (runtime: FakeRuntime): ProxyRunnerOptions => ({
  mode: 'auto',
  runtime,
  image: 'caddy:2',
  adminUrl: 'http://127.0.0.1:2019',
  dataDir: '/nonexistent/svc-data',
  instance: 'svc',
  log: silentLogger,
  answers: async () => true,
});

describe('proxy mode auto', () => {
  it('container when the image is present, without pulling', async () => {
    const runtime = new FakeRuntime({ images: ['caddy:2'] });
    expect(await chooseProxyMode(opts(runtime))).toEqual({ mode: 'container', reason: 'the proxy image caddy:2 is present' });
    expect(runtime.calls.filter((c) => c.method === 'pull')).toEqual([]);
  });

  it('container when the image can be pulled', async () => {
    const runtime = new FakeRuntime();
    expect(await chooseProxyMode(opts(runtime))).toEqual({ mode: 'container', reason: 'the proxy image caddy:2 was pulled' });
  });

  it('host when the image cannot be pulled, with the engine\'s reason', async () => {
    const runtime = new FakeRuntime();
    runtime.pullFailures.set('caddy:2', 'toomanyrequests: rate limit');
    const c = await chooseProxyMode(opts(runtime));
    expect(c.mode).toBe('host');
    expect(c.reason).toBe('the proxy image caddy:2 cannot be pulled (toomanyrequests: rate limit)');
  });

  it('external runs nothing; container and host skip the choice', async () => {
    const runtime = new FakeRuntime();
    expect(createProxyRunner({ ...opts(runtime), mode: 'external' })).toBeUndefined();
    expect(createProxyRunner({ ...opts(runtime), mode: 'container' })).toBeTypeOf('function');
  });
});
