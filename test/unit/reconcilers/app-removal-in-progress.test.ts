// The engine still removing a container (`docker rm -f` racing svc) is not a wait inside the reconcile
// (DESIGN.md rule 3) and not a failure: the pass comes back shortly, then recreates.
import { describe, expect, it } from 'vitest';
import { listAppEvents } from '../../../src/store/deploys.js';
import { NameInUseError, RemovalInProgressError, REMOVAL_RETRY_MS } from '../../../src/runtime/runtime.js';
import { AppHarness } from '../../support/app-harness.js';

describe('a removal in progress', () => {
  it('heal requeues shortly with no error event and no counted failure, then recreates', async () => {
    const h = new AppHarness();
    await h.deployed();
    h.rt.kill('svc-web-1');
    h.rt.containers.get('svc-web-1')!.state = 'removing';
    const remove = h.rt.remove.bind(h.rt);
    h.rt.remove = async (name: string) => {
      h.rt.remove = remove; // the engine finishes after this one answer
      throw new RemovalInProgressError(name);
    };
    expect(await h.rec.reconcile('web')).toEqual({ requeueAfterMs: REMOVAL_RETRY_MS });
    expect(listAppEvents(h.db, h.app().id)).toEqual([]);
    expect(h.app().healFailures).toBe(0);

    await h.drive();
    expect(h.rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(listAppEvents(h.db, h.app().id).map((e) => e.message)).toEqual(['live container svc-web-1 was gone; recreated']);
    await h.expectSteady();
  });

  it('a deploy step requeues shortly instead of failing the deploy', async () => {
    const h = new AppHarness();
    h.makeApp();
    const d = h.deploy('web:1');
    const remove = h.rt.remove.bind(h.rt);
    h.rt.remove = async (name: string) => {
      h.rt.remove = remove;
      throw new RemovalInProgressError(name);
    };
    await h.drive(undefined, { until: () => h.dep(d.id).status === 'success' });
    expect(h.dep(d.id).status).toBe('success');
    expect(h.rt.remove).toBe(remove); // the in-progress answer was met (in the create step) and passed
  });

  it('a live container the pass saw gone (the destroy event) is created at once: no removal asked, no second inspect', async () => {
    const h = new AppHarness();
    await h.deployed();
    await h.rt.remove('svc-web-1'); // docker rm -f, finished: the engine no longer lists it
    const from = h.rt.calls.length;
    await h.rec.reconcile('web');
    const after = h.rt.calls.slice(from);
    expect(after.map((c) => c.method).filter((m) => m !== 'list' && m !== 'ensureNetwork')).toEqual(['run']);
    expect(h.rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(h.dnsNow()).toEqual({}); // out of the answer until its probe passes (heal.ts)
    expect(listAppEvents(h.db, h.app().id).map((e) => e.message)).toEqual(['live container svc-web-1 was gone; recreated']);
    await h.rec.reconcile('web'); // the probe
    expect(h.dnsNow()).toMatchObject({ 'web.svc.internal.': h.rt.containers.get('svc-web-1')!.address });
    await h.expectSteady();
  });

  it('gone at the look but the name taken at the create: removed, then created (once)', async () => {
    const h = new AppHarness();
    await h.deployed();
    await h.rt.remove('svc-web-1');
    const run = h.rt.run.bind(h.rt);
    let refused = 0;
    h.rt.run = async (spec) => {
      refused++;
      h.rt.run = run; // the engine's listing lagged: the name was still held at the first create
      throw new NameInUseError(`Conflict. The container name "/${spec.name}" is already in use`);
    };
    const from = h.rt.calls.length;
    await h.rec.reconcile('web');
    expect(h.rt.calls.slice(from).map((c) => c.method).filter((m) => m !== 'list' && m !== 'ensureNetwork')).toEqual(['remove', 'run']);
    expect(refused).toBe(1);
    expect(h.rt.containers.get('svc-web-1')!.state).toBe('running');
    expect(h.app().healFailures).toBe(0);
    await h.drive(); // its probe: back in the answer
    await h.expectSteady();
  });
});
