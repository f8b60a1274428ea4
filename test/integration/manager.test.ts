// The manager against the real engine: a container of this instance dying reaches its reconciler through
// the event stream; one of another instance does not.
import { afterAll, describe, expect, it } from 'vitest';
import { createManager } from '../../src/controller/manager.js';
import type { Reconciler } from '../../src/controller/types.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { silentLogger } from '../../src/log.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
const INSTANCE = `test-mgr-${process.pid}`;
const OTHER = `test-mgr-other-${process.pid}`;

afterAll(async () => {
  for (const inst of [INSTANCE, OTHER]) {
    for (const c of await runtime.list({ [LABELS.instance]: inst }).catch(() => [])) await runtime.remove(c.id).catch(() => {});
  }
});

describe('manager with the docker engine', () => {
  it('reconciles the owning app when its container starts and dies', async () => {
    await ensureTestImages(runtime);
    const seen: string[] = [];
    const apps: Reconciler = { kind: 'app', listNames: () => [], reconcile: async (name) => (seen.push(name), {}) };
    const manager = createManager({ runtime, instance: INSTANCE, log: silentLogger });
    manager.register(apps);
    manager.start();
    try {
      await waitFor(async () => {
        // The subscription is up once a probe container's start reaches us.
        const name = `svc-test-mgr-probe-${process.pid}-${Date.now()}`;
        await runtime.run({ name, image: WEB_V1, labels: { [LABELS.managed]: 'true', [LABELS.instance]: INSTANCE, [LABELS.app]: 'probe' } });
        await runtime.remove(name);
        return seen.includes('probe');
      }, { timeoutMs: 20_000, intervalMs: 200, what: 'event stream' });

      const labels = { [LABELS.managed]: 'true', [LABELS.app]: 'web' };
      await runtime.run({ name: `svc-test-mgr-other-${process.pid}`, image: WEB_V1, labels: { ...labels, [LABELS.app]: 'intruder', [LABELS.instance]: OTHER } });
      const mine = await runtime.run({ name: `svc-test-mgr-web-${process.pid}`, image: WEB_V1, labels: { ...labels, [LABELS.instance]: INSTANCE } });
      await waitFor(() => seen.includes('web'), { what: 'start event of web' });
      const before = seen.filter((n) => n === 'web').length;
      await runtime.stop(mine.name, 0);
      await waitFor(() => seen.filter((n) => n === 'web').length > before, { what: 'die event of web' });
      // Engine events arrive in order: the other instance's start came before ours and was ignored.
      expect(seen).not.toContain('intruder');
    } finally {
      await manager.stop();
    }
  });
});
