// The directory watcher with real files: a burst of writes is one notification, after the burst.
import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRelevantChange, watchManifestDir, type DirWatcher } from '../../../src/manifests/watch.js';
import { waitFor } from '../../support/wait.js';

let dir: string;
let watcher: DirWatcher | undefined;
afterEach(async () => {
  await watcher?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('watchManifestDir', () => {
  it('debounces a burst of writes into one call, and calls again for a later change', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mf-watch-'));
    let calls = 0;
    watcher = watchManifestDir(dir, () => void calls++, 200);
    await new Promise<void>((r) => setImmediate(r));
    // chokidar reports readiness asynchronously; writes before it are not seen, so wait for a first call
    await waitFor(() => {
      writeFileSync(join(dir, 'probe.yaml'), `# ${Date.now()}\n`);
      return calls > 0;
    }, { timeoutMs: 10_000, intervalMs: 400, what: 'the watcher to report a change' });
    const base = calls;
    for (let i = 0; i < 30; i++) writeFileSync(join(dir, `f${i % 5}.yaml`), `# ${i}\n`);
    await waitFor(() => calls > base, { what: 'the debounced call' });
    writeFileSync(join(dir, 'later.yml'), '# later\n');
    await waitFor(() => calls > base + 1, { what: 'the call for the later change' });
    expect(calls).toBe(base + 2);
  });

  it.each([
    ['/m/a.yaml', true], ['/m/sub/b.YML', true], ['/m/sub', true], ['/m', true],
    ['/m/.a.yaml.swp', false], ['/m/.git', false], ['/m/notes.txt', false], ['/m/a.yaml~', false],
  ])('a change at %s is relevant: %s', (path, relevant) => {
    dir = mkdtempSync(join(tmpdir(), 'svc-mf-watch-'));
    expect(isRelevantChange('/m', path)).toBe(relevant);
  });
});
