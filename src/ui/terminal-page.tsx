/** @jsxImportSource hono/jsx */
// The app's terminal (issue 22), its app page's Terminal tab: `/apps/{id}/terminal` shows xterm.js (served from node_modules, no CDN),
// whose script opens `/apps/{id}/terminal/ws` on the daemon's own port. The socket needs the session (the UI
// wall), the page's CSRF token in `?csrf=` and a same-origin Origin: a WebSocket handshake is a GET no
// SameSite rule stops, so without both another site could open a shell with the user's cookie.
import { Hono, type Context } from 'hono';
import { upgradeWebSocket } from '@hono/node-server';
import { forbidden, notFound, unavailable } from '../errors.js';
import { idParam } from '../http/request.js';
import { serverOrigins } from '../http/transport.js';
import { getApp } from '../store/apps.js';
import { requireTerminalAccess } from '../terminal/access.js';
import { pickContainer, sizeOf, terminalEvents } from '../terminal/session.js';
import { ASSETS } from './assets.js';
import { render, type UiDeps, type UiEnv } from './context.js';
import { appView } from './app-pages.js';
import { AppFrame } from './app-view.js';
import { contentSecurityPolicy } from './csp.js';

export function terminalPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const appOf = (c: Context) => {
    const app = getApp(deps.db, idParam(c, 'id', 'app'));
    if (!app) throw notFound('app');
    return app;
  };

  r.get('/apps/:id/terminal', (c) => {
    const app = appOf(c);
    requireTerminalAccess(c.var.user);
    // xterm.js adds <style> elements for its theme and cell sizes: this page alone allows inline styles.
    c.header('content-security-policy', contentSecurityPolicy(deps.config.codehost.webUrl, { inlineStyles: true }));
    const head = (
      <>
        <link rel="stylesheet" href={ASSETS.xtermStyle.path} />
        <script src={ASSETS.xterm.path} defer></script>
        <script src={ASSETS.terminal.path} defer></script>
      </>
    );
    // The app page's Terminal tab: its header and tabs, no refresh (the page is the open session).
    return render(
      c,
      <AppFrame v={appView(deps, c, app.id, 'terminal')} tab="terminal" csrf={c.var.csrf} user={c.var.user} head={head}>
        <p>
          A shell (<code>sh</code>) in the app's running container (administrators; the session is recorded as an event, not what is typed). Closing the page ends it.
          From a terminal: <code>svc exec {app.name} -- sh</code>
        </p>
        <p id="terminal-state" class="muted" role="status">
          Connecting… (the terminal needs JavaScript)
        </p>
        <div id="terminal" class="terminal" data-ws={`/apps/${app.id}/terminal/ws?csrf=${encodeURIComponent(c.var.csrf)}`}></div>
      </AppFrame>,
    );
  });

  r.get(
    '/apps/:id/terminal/ws',
    async (c, next) => {
      if (!deps.terminal) throw unavailable('terminal_unavailable', 'this daemon has no terminal');
      deps.csrf.check(c, c.req.query('csrf'));
      const origin = c.req.header('origin')?.toLowerCase();
      if (!origin || !serverOrigins(c, deps.config).includes(origin)) throw forbidden('csrf', 'the terminal opens only from svc’s own page');
      return next();
    },
    upgradeWebSocket(async (c) => {
      const app = appOf(c);
      const { cols, rows, replica } = sizeOf((k) => c.req.query(k));
      const req = { app: { id: app.id, name: app.name }, user: c.var.user, via: 'ui' as const, cmd: ['sh'], cols, rows, replica };
      const t = { db: deps.db, log: deps.log, terminal: deps.terminal!, now: deps.now };
      return terminalEvents(t, req, await pickContainer(t, req));
    }),
  );
  return r;
}
