// The UI's assets: ours are hashed at start; a package file (xterm.js) is read only when it is asked for
// and never kept in memory (docs/decisions/0023-idle-footprint.md), yet is served under its hashed name.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ASSETS, assetRoutes, packageAsset } from '../../../src/ui/assets.js';

const xtermFile = createRequire(import.meta.url).resolve('@xterm/xterm/lib/xterm.js');

describe('UI assets', () => {
  it('serves xterm.js on first use under the hash of its content, without the source map comment', async () => {
    const routes = assetRoutes();
    const text = readFileSync(xtermFile, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
    const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
    expect(ASSETS.xterm.path).toBe(`/assets/xterm.${hash}.js`);
    const res = await routes.request(ASSETS.xterm.path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/javascript');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(await res.text()).toBe(text);
    const css = await routes.request(ASSETS.xtermStyle.path);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
  });

  it('answers 404 for a stale hash or an unknown name', async () => {
    const routes = assetRoutes();
    expect((await routes.request('/assets/xterm.000000000000.js')).status).toBe(404);
    expect((await routes.request('/assets/nothing.css')).status).toBe(404);
    expect((await routes.request(ASSETS.style.path)).status).toBe(200);
  });

  it('reads a package file only when its path or body is asked for', () => {
    // A spec that does not resolve: creating the asset must not throw, asking for its path does.
    const a = packageAsset('missing', 'js', 'text/javascript', '@xterm/xterm/lib/no-such-file.js');
    expect(a.prefix).toBe('missing.');
    expect(() => a.path).toThrow();
  });
});
