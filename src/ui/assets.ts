// Static assets of the UI, served by the daemon itself (svc runs on hosts without internet: no CDN).
// Each is named after a hash of its content, so it can be cached for a year and a new release is never
// mixed with an old stylesheet or script. They live in TypeScript modules so the build carries them.
import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CLIENT } from './assets/client.js';
import { STYLE } from './assets/style.js';
import { TERMINAL_CLIENT } from './assets/terminal-client.js';

/** A file of an npm package, read once at start (xterm.js ships its browser build; we serve it as is). */
const packageFile = (spec: string) => readFileSync(createRequire(import.meta.url).resolve(spec), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');

interface Asset {
  path: string;
  type: string;
  body: string;
}

function asset(name: string, ext: string, type: string, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/assets/${name}.${hash}.${ext}`, type, body };
}

/** The hashed URLs the layout links to. */
export const ASSETS = {
  style: asset('style', 'css', 'text/css; charset=utf-8', STYLE),
  script: asset('app', 'js', 'text/javascript; charset=utf-8', CLIENT),
  xterm: asset('xterm', 'js', 'text/javascript; charset=utf-8', packageFile('@xterm/xterm/lib/xterm.js')),
  xtermStyle: asset('xterm', 'css', 'text/css; charset=utf-8', packageFile('@xterm/xterm/css/xterm.css')),
  terminal: asset('terminal', 'js', 'text/javascript; charset=utf-8', TERMINAL_CLIENT),
};

const byPath = new Map(Object.values(ASSETS).map((a) => [a.path, a]));

/** `GET /assets/<name>.<hash>.<ext>`: immutable for a year; any other name is a 404. */
export function assetRoutes() {
  const r = new Hono();
  r.get('/assets/:file', (c) => {
    const a = byPath.get(c.req.path);
    if (!a) return c.text('not found', 404);
    c.header('content-type', a.type);
    c.header('cache-control', 'public, max-age=31536000, immutable');
    return c.body(a.body);
  });
  return r;
}
