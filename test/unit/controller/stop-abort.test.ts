// A stopping daemon ends a long reconcile at once (DESIGN.md rule 13): the manager aborts the signal it
// gave the pass, a clone in progress ends, the deploy stays at its step (not failed), and the next start
// runs that step again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManager } from '../../../src/controller/manager.js';
import type { GitRunner } from '../../../src/build/git.js';
import { AppHarness } from '../../support/app-harness.js';
import { waitFor } from '../../support/wait.js';

const IMAGES = { static: 's', node: 'n', go: 'g', goRuntime: 'gr', maven: 'm', gradle: 'gd', javaRuntime: 'j' };
const SHA = 'a'.repeat(40);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A git whose fetch hangs until its signal aborts (a 10-minute clone), or answers at once. */
function git(mode: 'hangs' | 'answers', calls: string[]): GitRunner {
  return async (args, o) => {
    calls.push(args[0]!);
    if (args[0] === 'fetch' && mode === 'hangs') {
      await new Promise((_, reject) => {
        const t = setTimeout(() => reject(new Error('fetch gave up after 20 s')), 20_000);
        o.signal?.addEventListener('abort', () => (clearTimeout(t), reject(new Error('aborted'))), { once: true });
      });
    }
    return { stdout: args[0] === 'rev-parse' ? `${SHA}\n` : '', stderr: '' };
  };
}

function start(h: AppHarness, workDir: string, g: GitRunner) {
  const manager = createManager({ runtime: h.rt, instance: 'svc' });
  manager.register(h.makeReconciler({ workDir, images: IMAGES, git: g }));
  manager.start();
  cleanups.push(() => manager.stop());
  return manager;
}

describe('stopping the manager during a long reconcile', () => {
  it('returns promptly, leaves the deploy at its step, and the step runs again after a restart', async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'svc-abort-'));
    cleanups.push(() => rm(workDir, { recursive: true, force: true }));
    const h = new AppHarness();
    h.makeApp('web', { buildMode: 'svc_build', repoUrl: 'https://example.com/web.git', imageRef: null });
    const d = h.deploy(null);

    const first: string[] = [];
    const m1 = start(h, workDir, git('hangs', first));
    await waitFor(() => first.includes('fetch'));
    const t0 = performance.now();
    await m1.stop();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(h.dep(d.id)).toMatchObject({ status: 'running', step: 'clone' });

    const second: string[] = [];
    start(h, workDir, git('answers', second));
    await waitFor(() => h.dep(d.id).commitSha === SHA);
    expect(second).toContain('fetch');
  });
});
