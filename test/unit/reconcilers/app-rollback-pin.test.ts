// A rollback runs exactly what the rolled-back deploy ran (issue 35, defect 2): the image its containers were
// made from (the engine's image id, recorded on the deploy as `image_pin`), even after its tag moved
// (`web:latest` pulled again with newer content). Also what a heal's recreation and a new replica run.
import { describe, expect, it } from 'vitest';
import { createDeploy, rollbackTarget, sameImage } from '../../../src/store/deploys.js';
import { AppHarness } from '../../support/app-harness.js';

const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;

/** web:latest deployed while it named A, then again once it named B; live is the second. */
async function movedTag() {
  const h = new AppHarness();
  h.makeApp('web', { imageRef: 'web:latest' });
  h.rt.setImageId('web:latest', A);
  const first = await h.deployed('web:latest');
  h.rt.setImageId('web:latest', B);
  const second = await h.deployed('web:latest');
  return { h, first, second };
}

function rollback(h: AppHarness) {
  const target = rollbackTarget(h.db, h.app().id, h.app().currentDeployId);
  if (!target) throw new Error('no rollback target');
  return { target, deploy: createDeploy(h.db, h.enqueue, h.bus, { appId: h.app().id, appName: 'web', imageRef: target.imageRef, trigger: 'rollback', rollbackOf: target }) };
}

describe('a rollback pins the image its target ran', () => {
  it('records the image id on each deploy and makes the deploy of the moved tag a target', async () => {
    const { h, first, second } = await movedTag();
    expect([h.dep(first.id).imagePin, h.dep(second.id).imagePin]).toEqual([A, B]);
    expect(rollbackTarget(h.db, h.app().id, h.app().currentDeployId)?.id).toBe(first.id);
  });

  it('runs the first image, not what the tag names now, and pulls nothing', async () => {
    const { h, first } = await movedTag();
    const pulls = h.rt.calls.filter((c) => c.method === 'pull').length;
    const { deploy } = rollback(h);
    await h.drive(undefined, { until: () => h.dep(deploy.id).status === 'success' });
    expect(h.dep(deploy.id)).toMatchObject({ status: 'success', imageRef: 'web:latest', imagePin: A });
    const live = h.rt.containers.get(h.app().liveContainerName!)!;
    expect(live.spec.image).toBe(A);
    expect(h.rt.calls.filter((c) => c.method === 'pull').length).toBe(pulls);
    // The deploy rolled back to keeps being a distinct image: rolling back again goes to B's deploy.
    expect(rollbackTarget(h.db, h.app().id, h.app().currentDeployId)?.imagePin).toBe(B);
    expect(first.id).toBeLessThan(deploy.id);
  });

  it('a recreation after `docker rm -f` runs the pinned image too', async () => {
    const { h } = await movedTag();
    const { deploy } = rollback(h);
    await h.drive(undefined, { until: () => h.dep(deploy.id).status === 'success' && h.dep(deploy.id).drainUntil === null });
    const name = h.app().liveContainerName!;
    h.rt.containers.delete(name);
    await h.drive();
    expect(h.rt.containers.get(name)).toMatchObject({ state: 'running', spec: { image: A } });
  });

  it('fails, leaving the live version serving, when the pinned image is gone and the tag names another', async () => {
    const { h, second } = await movedTag();
    h.rt.dropImageId(A);
    const live = h.app().liveContainerName;
    const { deploy } = rollback(h);
    await h.drive(undefined, { until: () => h.dep(deploy.id).status === 'failed' });
    expect(h.dep(deploy.id).error).toBe(`image ${A}, which web:latest named when that deploy ran, is no longer on the engine and web:latest names another image now; deploy web:latest to run what it names today`);
    expect(h.app()).toMatchObject({ liveContainerName: live, currentDeployId: second.id });
    expect(h.rt.containers.get(live!)?.state).toBe('running');
  });

  it('a deploy made before pins (none recorded) is rolled back to by its reference, as before', async () => {
    const h = new AppHarness();
    const first = await h.deployed('web:1');
    await h.deployed('web:2');
    const { target, deploy } = rollback(h);
    expect([target.id, target.imagePin]).toEqual([first.id, null]);
    await h.drive(undefined, { until: () => h.dep(deploy.id).status === 'success' });
    expect(h.rt.containers.get(h.app().liveContainerName!)?.spec.image).toBe('web:1');
  });
});

describe('sameImage', () => {
  const d = (imageRef: string | null, imagePin: string | null) => ({ imageRef, imagePin });
  it.each([
    [d('web:1', null), d('web:1', null), true],
    [d('web:1', null), d('web:2', null), false],
    [d('web:latest', A), d('web:latest', A), true],
    [d('web:latest', A), d('web:latest', B), false],
    [d('web:latest', A), d('web:latest', null), true], // an older deploy without a pin: by reference
    [d('web:1', A), d('web:2', A), false], // two tags of one image: two references, as a user reads them
  ])('%o and %o: %s', (a, b, same) => {
    expect(sameImage(a, b)).toBe(same);
  });
  it('nothing live: every deploy differs', () => expect(sameImage(d('web:1', null), undefined)).toBe(false));
});
