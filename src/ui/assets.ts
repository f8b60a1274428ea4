// Static assets of the UI, served by the daemon itself (svc runs on hosts without internet: no CDN).
// Each is named after a hash of its content, so it can be cached for a year and a new release is never
// mixed with an old stylesheet or script. Ours live in TypeScript modules so the build carries them.
import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CLIENT } from './assets/client.js';
import { STYLE } from './assets/style.js';
import { TERMINAL_CLIENT } from './assets/terminal-client.js';
import { API_DOCS_CLIENT } from './assets/api-docs-client.js';

interface Asset {
  /** The file name's start (`xterm.`): picks the candidates of a request before any path is computed. */
  prefix: string;
  /** `/assets/<name>.<hash>.<ext>`; for a package file, computed the first time it is asked for. */
  readonly path: string;
  type: string;
  body(): Promise<string>;
}

const hashOf = (body: string) => createHash('sha256').update(body).digest('hex').slice(0, 12);

function asset(name: string, ext: string, type: string, body: string): Asset {
  const path = `/assets/${name}.${hashOf(body)}.${ext}`;
  return { prefix: `${name}.`, path, type, body: async () => body };
}

/** The source map comment goes: the map is not served. */
const withoutMapComment = (text: string) => text.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');

/**
 * A file of an npm package (xterm.js ships its browser build; we serve it as is). Read from disk when its
 * path or body is asked for, never kept: xterm.js is a 1 MB string that only the terminal page needs, and
 * holding it from the start cost every daemon that memory (docs/decisions/0023-idle-footprint.md).
 */
export function packageAsset(name: string, ext: string, type: string, spec: string, besideEntry?: string): Asset {
  let file: string | undefined;
  let path: string | undefined;
  const read = (sync: boolean) => {
    // `besideEntry`: a file the package ships but does not export, found next to its entry point.
    const resolve = () => createRequire(import.meta.url).resolve(spec);
    file ??= besideEntry ? join(dirname(resolve()), besideEntry) : resolve();
    return sync ? withoutMapComment(readFileSync(file, 'utf8')) : readFile(file, 'utf8').then(withoutMapComment);
  };
  return {
    prefix: `${name}.`,
    get path() {
      return (path ??= `/assets/${name}.${hashOf(read(true) as string)}.${ext}`);
    },
    type,
    body: () => read(false) as Promise<string>,
  };
}

/** The hashed URLs the layout links to. */
export const ASSETS = {
  style: asset('style', 'css', 'text/css; charset=utf-8', STYLE),
  script: asset('app', 'js', 'text/javascript; charset=utf-8', CLIENT),
  xterm: packageAsset('xterm', 'js', 'text/javascript; charset=utf-8', '@xterm/xterm/lib/xterm.js'),
  xtermStyle: packageAsset('xterm', 'css', 'text/css; charset=utf-8', '@xterm/xterm/css/xterm.css'),
  terminal: asset('terminal', 'js', 'text/javascript; charset=utf-8', TERMINAL_CLIENT),
  // The API reference (/docs/api): Scalar's standalone bundle (4.8 MB, read from node_modules when asked for, never kept).
  scalar: packageAsset('scalar', 'js', 'text/javascript; charset=utf-8', '@scalar/api-reference', 'browser/standalone.js'),
  apiDocs: asset('reference', 'js', 'text/javascript; charset=utf-8', API_DOCS_CLIENT),
};

/** `GET /assets/<name>.<hash>.<ext>`: immutable for a year; any other name is a 404. */
export function assetRoutes() {
  const r = new Hono();
  r.get('/assets/:file', async (c) => {
    // The prefix first: a package file is read (to hash it) only for a request that names it.
    const file = c.req.param('file');
    const a = Object.values(ASSETS).find((x) => file.startsWith(x.prefix) && c.req.path === x.path);
    if (!a) return c.text('not found', 404);
    c.header('content-type', a.type);
    c.header('cache-control', 'public, max-age=31536000, immutable');
    return c.body(await a.body());
  });
  return r;
}
