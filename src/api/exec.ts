// `GET /api/apps/{id}/exec` upgraded to a WebSocket: `svc exec APP -- CMD` (API.md "Terminal"). Only with an
// API token: a browser session would let another site open this socket with the user's cookie (a WebSocket
// handshake is a GET no CSRF rule stops), so the UI has its own route with its CSRF token. The command comes
// as repeated `cmd` query values (an argument array, never a shell string); default `sh`.
import { Hono } from 'hono';
import { upgradeWebSocket } from '@hono/node-server';
import { forbidden, invalid, notFound, unavailable } from '../errors.js';
import { idParam } from '../http/request.js';
import { getApp } from '../store/apps.js';
import { pickContainer, sizeOf, terminalEvents } from '../terminal/session.js';
import type { ApiDeps, ApiEnv } from './deps.js';
import { operations } from './openapi/operation.js';

const op = operations('Terminal');

export function execRoutes(deps: ApiDeps) {
  const r = new Hono<ApiEnv>();
  r.get(
    '/apps/:id/exec',
    op({ summary: 'A command in the live container over a WebSocket (`svc exec`; API tokens only, audited)', query: { cmd: 'one argument, repeated (default sh)', cols: 'terminal width', rows: 'terminal height', replica: 'which replica' }, status: 101, media: { type: 'application/octet-stream', description: 'Switching Protocols: a WebSocket carrying the terminal' }, errors: { 400: 'invalid_request: not a WebSocket upgrade, or bad cmd', 403: 'token_required: a browser session may not', 409: 'conflict: no live container', 503: 'terminal_unavailable' } }),
    async (c, next) => {
      if (c.get('authVia') !== 'token') throw forbidden('token_required', 'exec needs an API token (Authorization: Bearer); the web UI has its own terminal');
      if (!deps.terminal) throw unavailable('terminal_unavailable', 'this daemon has no terminal');
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') throw invalid('this endpoint is a WebSocket: send Upgrade: websocket');
      return next();
    },
    upgradeWebSocket(async (c) => {
      const app = getApp(deps.db, idParam(c, 'id', 'app'));
      if (!app) throw notFound('app');
      const cmd = c.req.queries('cmd') ?? ['sh'];
      if (cmd.length === 0 || cmd.length > 256 || cmd.some((a) => a.length > 4096) || cmd[0] === '') throw invalid('cmd must be 1 to 256 arguments');
      const { cols, rows, replica } = sizeOf((k) => c.req.query(k));
      const req = { app: { id: app.id, name: app.name }, user: c.get('user'), via: 'cli' as const, cmd, cols, rows, replica };
      const t = { db: deps.db, log: deps.log, terminal: deps.terminal!, now: deps.now };
      return terminalEvents(t, req, await pickContainer(t, req));
    }),
  );
  return r;
}
