import { describe, expect, it } from 'vitest';
import { createManager } from '../../../src/controller/manager.js';
import { keysForEvent } from '../../../src/controller/event-keys.js';
import type { Kind, Reconciler, Result } from '../../../src/controller/types.js';
import { createLogger } from '../../../src/log.js';
import { createFakeClock, settle } from '../../support/fake-clock.js';
import { FakeRuntime } from '../../support/fake-runtime.js';

/** A reconciler that records the names it was asked to converge. */
function fakeReconciler(kind: Kind, names: string[], reconcile?: (name: string) => Promise<Result>) {
  const seen: string[] = [];
  const r: Reconciler & { seen: string[]; names: string[] } = {
    kind,
    names,
    seen,
    listNames: () => r.names,
    async reconcile(name) {
      seen.push(name);
      return reconcile ? reconcile(name) : {};
    },
  };
  return r;
}

function setup(opts: { resyncMs?: number } = {}) {
  const clock = createFakeClock();
  const runtime = new FakeRuntime({ images: ['web:v1'] });
  const lines: string[] = [];
  const log = createLogger('debug', {}, (l) => lines.push(l));
  const manager = createManager({
    runtime,
    instance: 'test-mgr',
    clock,
    log,
    resyncMs: opts.resyncMs ?? 60_000,
    engine: 'unix:///var/run/docker.sock',
  });
  const apps = fakeReconciler('app', ['web', 'api']);
  const services = fakeReconciler('service', ['db']);
  const proxy = fakeReconciler('proxy', ['main']);
  for (const r of [apps, services, proxy]) manager.register(r);
  const msgs = () => lines.map((l) => JSON.parse(l).msg as string);
  return { clock, runtime, manager, apps, services, proxy, lines, msgs };
}

const labels = (extra: Record<string, string>, instance = 'test-mgr') => ({
  'svc.managed': 'true',
  'svc.instance': instance,
  ...extra,
});

describe('keysForEvent', () => {
  const ev = (action: string, l: Record<string, string>) => ({ action, id: 'x', name: 'c', labels: l });
  it.each([
    ['app container dies', ev('die', labels({ 'svc.app': 'web' })), ['app:web']],
    ['service container oom', ev('oom', labels({ 'svc.service': 'db' })), ['service:db']],
    ['proxy container stops', ev('stop', labels({ 'svc.role': 'proxy' })), ['proxy:main']],
    ['health status with detail', ev('health_status: unhealthy', labels({ 'svc.app': 'web' })), ['app:web']],
    ['start, kill, destroy', ev('destroy', labels({ 'svc.app': 'web' })), ['app:web']],
    ['other instance', ev('die', labels({ 'svc.app': 'web' }, 'someone-else')), []],
    ['no instance label', ev('die', { 'svc.app': 'web' }), []],
    ['exec noise', ev('exec_start: sh -c true', labels({ 'svc.app': 'web' })), []],
    ['create is not watched', ev('create', labels({ 'svc.app': 'web' })), []],
    ['unlabelled container', ev('die', labels({})), []],
  ])('%s', (_name, event, keys) => {
    expect(keysForEvent(event, 'test-mgr')).toEqual(keys);
  });
});

describe('manager', () => {
  it('enqueues every name at start, and holds keys enqueued before start', async () => {
    const s = setup();
    s.manager.enqueue('app:web');
    s.manager.enqueue('app:late-row');
    await settle();
    expect(s.apps.seen).toEqual([]);
    s.manager.start();
    await settle();
    expect(s.apps.seen.sort()).toEqual(['api', 'late-row', 'web']);
    expect(s.services.seen).toEqual(['db']);
    expect(s.proxy.seen).toEqual(['main']);
    await s.manager.stop();
  });

  it('maps container events of its instance to owning keys', async () => {
    const s = setup();
    s.manager.start();
    await settle();
    s.apps.seen.length = 0;
    s.proxy.seen.length = 0;
    await s.runtime.run({ name: 'web-1', image: 'web:v1', labels: labels({ 'svc.app': 'web' }), network: 'n' });
    await s.runtime.run({ name: 'other', image: 'web:v1', labels: labels({ 'svc.app': 'api' }, 'other-daemon') });
    await settle();
    expect(s.apps.seen).toEqual(['web']); // start coalesced; other instance ignored
    s.runtime.kill('web-1');
    await settle();
    expect(s.apps.seen).toEqual(['web', 'web']);
    await s.runtime.run({ name: 'caddy', image: 'web:v1', labels: labels({ 'svc.role': 'proxy' }) });
    await settle();
    expect(s.proxy.seen).toEqual(['main']);
    await s.manager.stop();
  });

  it('resyncs every key on the timer', async () => {
    const s = setup({ resyncMs: 60_000 });
    s.manager.start();
    await settle();
    s.apps.names.push('new');
    await s.clock.advance(59_999);
    expect(s.apps.seen).toHaveLength(2);
    await s.clock.advance(1);
    expect(s.apps.seen.sort()).toEqual(['api', 'api', 'new', 'web', 'web']);
    await s.clock.advance(60_000);
    expect(s.apps.seen).toHaveLength(8);
    await s.manager.stop();
  });

  it('reconnects the event stream with backoff and enqueues everything on reconnect', async () => {
    const s = setup({ resyncMs: 3_600_000 });
    s.manager.start();
    await settle();
    expect(s.runtime.subscriberCount).toBe(1);
    s.apps.seen.length = 0;
    s.runtime.setReachable(false);
    await settle();
    expect(s.msgs()).toContain('docker events stream failed; reconnecting');
    for (let i = 0; i < 6; i++) await s.clock.advance(30_000); // several failed attempts
    const outage = s.msgs().filter((m) => m.startsWith('docker engine unreachable'));
    expect(outage).toEqual(['docker engine unreachable at unix:///var/run/docker.sock: connect ENOENT /var/run/docker.sock; retrying']);
    expect(s.apps.seen).toEqual([]);
    s.runtime.setReachable(true);
    await s.clock.advance(30_000);
    expect(s.runtime.subscriberCount).toBe(1);
    expect(s.msgs()).toContain('docker engine reachable again');
    expect(s.apps.seen.sort()).toEqual(['api', 'web']);
    await s.runtime.run({ name: 'web-2', image: 'web:v1', labels: labels({ 'svc.app': 'web' }) });
    await settle();
    expect(s.apps.seen.filter((n) => n === 'web')).toHaveLength(2);
    await s.manager.stop();
  });

  it('keeps working when the engine is unreachable at start, with one clear line', async () => {
    const s = setup();
    s.runtime.setReachable(false);
    s.manager.start();
    await settle();
    await s.clock.advance(5_000);
    expect(s.msgs().filter((m) => m.startsWith('docker engine unreachable at'))).toHaveLength(1);
    s.manager.enqueue('app:web');
    await settle();
    expect(s.apps.seen.filter((n) => n === 'web')).toHaveLength(2); // start + enqueue
    await s.manager.stop();
  });

  it('drops keys of kinds nobody registered, and enqueues a late registration', async () => {
    const s = setup();
    s.manager.start();
    s.manager.enqueue('backup:nightly');
    await settle();
    const backups = fakeReconciler('backup', ['nightly']);
    s.manager.register(backups);
    await settle();
    expect(backups.seen).toEqual(['nightly']);
    expect(() => s.manager.register(fakeReconciler('app', []))).toThrow(/already registered/);
    await s.manager.stop();
  });

  it('stop ends the event stream and waits for running reconciles', async () => {
    const s = setup();
    let release!: () => void;
    const slow = fakeReconciler('backup', ['b'], () => new Promise<Result>((r) => (release = () => r({}))));
    s.manager.register(slow);
    s.manager.start();
    await settle();
    expect(slow.seen).toEqual(['b']);
    let stopped = false;
    const stopping = s.manager.stop().then(() => (stopped = true));
    await settle();
    expect(s.runtime.subscriberCount).toBe(0);
    expect(stopped).toBe(false);
    release();
    await stopping;
    s.manager.enqueue('app:web');
    await s.clock.advance(600_000);
    expect(s.apps.seen.filter((n) => n === 'web')).toHaveLength(1);
    expect(s.clock.pending()).toBe(0);
  });
});
