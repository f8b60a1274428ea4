import { describe, expect, it } from 'vitest';
import { FakeRuntime } from '../../support/fake-runtime.js';
import type { RuntimeEvent } from '../../../src/runtime/runtime.js';

const spec = (name: string, image = 'web:v1') => ({
  name,
  image,
  labels: { 'svc.managed': 'true', 'svc.instance': 'test-fake', 'svc.app': 'web' },
  network: 'svc',
});

async function collect(rt: FakeRuntime, act: () => Promise<void> | void): Promise<string[]> {
  const abort = new AbortController();
  const seen: RuntimeEvent[] = [];
  let connected!: () => void;
  const ready = new Promise<void>((r) => (connected = r));
  const done = (async () => {
    for await (const ev of rt.events(abort.signal, { onConnected: connected })) seen.push(ev);
  })();
  await ready;
  await act();
  await new Promise((r) => setImmediate(r));
  abort.abort();
  await done;
  return seen.map((e) => `${e.action} ${e.name}`);
}

describe('FakeRuntime', () => {
  it('runs, assigns 10.0.0.N addresses and lists by labels', async () => {
    const rt = new FakeRuntime({ images: ['web:v1'] });
    const a = await rt.run(spec('a'));
    const b = await rt.run(spec('b'));
    expect([a.address, b.address]).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(a).toMatchObject({ running: true, state: 'running', health: 'none' });
    expect((await rt.list({ 'svc.app': 'web' })).map((c) => c.name)).toEqual(['a', 'b']);
    expect(await rt.list({ 'svc.app': 'other' })).toEqual([]);
    expect((await rt.inspect('a', 'elsewhere'))?.address).toBeUndefined();
    await expect(rt.run(spec('a'))).rejects.toThrow(/already in use/);
    expect(rt.callsOf('run')).toHaveLength(3);
  });

  it('refuses images it does not have, and pull failures are settable', async () => {
    const rt = new FakeRuntime();
    await expect(rt.run(spec('a', 'web:v2'))).rejects.toThrow(/No such image/);
    rt.pullFailures.set('web:v2', 'manifest unknown');
    await expect(rt.pull('web:v2')).rejects.toThrow('manifest unknown');
    rt.pullFailures.clear();
    const progress: string[] = [];
    await rt.pull('web:v2', (p) => progress.push(p.status));
    expect(await rt.hasImage('web:v2')).toBe(true);
    expect(progress).toHaveLength(2);
  });

  it('simulates image behaviour and crashes', async () => {
    const rt = new FakeRuntime({ images: ['crash', 'sick', 'web:v1'] });
    rt.behaviour.set('crash', 'exits');
    rt.behaviour.set('sick', 'unhealthy');
    expect(await rt.run(spec('c', 'crash'))).toMatchObject({ running: false, state: 'exited', exitCode: 1, address: undefined });
    expect(await rt.run(spec('s', 'sick'))).toMatchObject({ running: true, health: 'unhealthy' });
    await rt.run(spec('w'));
    rt.kill('w');
    expect(await rt.inspect('w')).toMatchObject({ running: false, exitCode: 137 });
    await rt.start('w');
    expect(await rt.inspect('w')).toMatchObject({ running: true, exitCode: undefined });
  });

  it('reports a kill for memory with an oom event; the next start clears it', async () => {
    const rt = new FakeRuntime({ images: ['web:v1'] });
    await rt.run(spec('w1'));
    expect(await collect(rt, () => rt.oom('w1'))).toEqual(['oom w1', 'die w1']);
    expect(await rt.inspect('w1')).toMatchObject({ running: false, exitCode: 137, oomKilled: true });
    await rt.start('w1');
    expect((await rt.inspect('w1'))?.oomKilled).toBeUndefined();
    rt.kill('w1');
    expect(await rt.inspect('w1')).toMatchObject({ exitCode: 137 });
    expect((await rt.inspect('w1'))?.oomKilled).toBeUndefined();
  });

  it('stops and removes tolerantly, and emits engine-like events', async () => {
    const rt = new FakeRuntime({ images: ['web:v1'] });
    const events = await collect(rt, async () => {
      await rt.run(spec('a'));
      await rt.stop('a', 10);
      await rt.stop('a', 10);
      await rt.remove('a');
      await rt.remove('a');
      await rt.stop('missing', 1);
    });
    expect(events).toEqual(['create a', 'start a', 'kill a', 'die a', 'stop a', 'destroy a']);
    expect(await rt.inspect('a')).toBeUndefined();
  });

  it('fails everything while unreachable and ends event streams with an error', async () => {
    const rt = new FakeRuntime();
    const abort = new AbortController();
    const it = rt.events(abort.signal)[Symbol.asyncIterator]();
    const next = it.next();
    rt.setReachable(false);
    await expect(next).rejects.toThrow(/EOF/);
    expect(await rt.ping()).toBe(false);
    await expect(rt.list({})).rejects.toThrow(/ENOENT/);
    await expect(rt.events(abort.signal)[Symbol.asyncIterator]().next()).rejects.toThrow(/ENOENT/);
  });

  it('answers exec and logs', async () => {
    const rt = new FakeRuntime({ images: ['web:v1'] });
    await rt.run(spec('a'));
    rt.execHandler = (_n, cmd) => ({ exitCode: 0, stdout: cmd.join(' '), stderr: '' });
    expect(await rt.exec('a', ['echo', 'hi'])).toEqual({ exitCode: 0, stdout: 'echo hi', stderr: '' });
    rt.log('a', 'one');
    rt.log('a', 'two', 'stderr');
    const lines: string[] = [];
    for await (const l of rt.logs('a', { follow: false, tail: 1 })) lines.push(`${l.stream}:${l.line}`);
    expect(lines).toEqual(['stderr:two']);
  });
});
