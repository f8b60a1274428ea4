// The engine still removing a container (`docker rm -f` racing svc) is not a wait inside the reconcile
// (DESIGN.md rule 3) and not a failure: outside a watch window the replacement takes the next name at once;
// inside one, the pass comes back shortly, then recreates under the same name.
import { describe, expect, it } from 'vitest';
import { listAppEvents } from '../../../src/store/deploys.js';
import { RemovalInProgressError, REMOVAL_RETRY_MS } from '../../../src/runtime/runtime.js';
import { AppHarness, APP_SETTINGS } from '../../support/app-harness.js';

describe('a removal in progress', () => {
  it('outside a watch window, heal recreates at once under the next name (the old one is left to the engine)', async () => {
    const h = new AppHarness();
    await h.deployed();
    h.rt.kill('svc-web-1');
    h.rt.containers.get('svc-web-1')!.state = 'removing';
    // The engine: its removal is in progress until `finish`; svc must not wait for it nor touch it.
    const remove = h.rt.remove.bind(h.rt);
    h.rt.remove = async (name: string) => {
      if (name === 'svc-web-1' && h.rt.containers.get(name)?.state === 'removing') throw new RemovalInProgressError(name);
      return remove(name);
    };
    await h.rec.reconcile('web');
    expect(h.app().liveContainerName).toBe('svc-web-1-h1');
    expect(h.rt.containers.get('svc-web-1-h1')!.state).toBe('running');
    expect(h.rt.containers.get('svc-web-1')!.state).toBe('removing');
    expect(listAppEvents(h.db, h.app().id).map((e) => e.message)).toEqual(['live container svc-web-1 was being removed; recreated as svc-web-1-h1']);
    expect(h.app().healFailures).toBe(0);
    // The next pass meets the old one as an orphan the engine is already removing: no error.
    await expect(h.rec.reconcile('web')).resolves.toBeDefined();
    h.rt.remove = remove;
    await h.rt.remove('svc-web-1'); // the engine finishes
    await h.drive();
    expect([...h.rt.containers.keys()]).toEqual(['svc-web-1-h1']);
    await h.expectSteady();

    // Removed again while its own removal runs: the generation after it; gone for good: its own name again.
    h.rt.kill('svc-web-1-h1');
    h.rt.containers.get('svc-web-1-h1')!.state = 'removing';
    h.rt.remove = async (name: string) => {
      if (h.rt.containers.get(name)?.state === 'removing') throw new RemovalInProgressError(name);
      return remove(name);
    };
    await h.rec.reconcile('web');
    expect(h.app().liveContainerName).toBe('svc-web-1-h2');
    h.rt.remove = remove;
    await h.rt.remove('svc-web-1-h1');
    await h.rt.remove('svc-web-1-h2');
    await h.drive();
    expect(h.app().liveContainerName).toBe('svc-web-1-h2');
    expect(h.rt.containers.get('svc-web-1-h2')!.state).toBe('running');
    await h.expectSteady();
  });

  it('inside a watch window, heal requeues shortly with no error event and no counted failure, then recreates under its name', async () => {
    const h = new AppHarness({ ...APP_SETTINGS, watchMs: 60_000 });
    await h.deployed('web:1');
    await h.deployed('web:2');
    const live = h.app().liveContainerName!;
    expect(h.dep(2).watchUntil).not.toBeNull();
    h.rt.kill(live);
    h.rt.containers.get(live)!.state = 'removing';
    const remove = h.rt.remove.bind(h.rt);
    h.rt.remove = async (name: string) => {
      h.rt.remove = remove; // the engine finishes after this one answer
      throw new RemovalInProgressError(name);
    };
    expect(await h.rec.reconcile('web')).toEqual({ requeueAfterMs: REMOVAL_RETRY_MS });
    expect(listAppEvents(h.db, h.app().id)).toEqual([]);
    expect(h.app().healFailures).toBe(0);

    await h.drive(undefined, { until: () => h.rt.containers.get(live)?.state === 'running' });
    expect(h.app().liveContainerName).toBe(live);
    expect(listAppEvents(h.db, h.app().id).map((e) => e.message)).toEqual([`live container ${live} was gone; recreated`]);
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
});
