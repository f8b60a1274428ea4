// One terminal session over a WebSocket, shared by the UI (xterm.js) and the CLI (`svc exec`): picks the
// app's container before the upgrade (so a refusal is an HTTP status), then joins the socket and the exec's
// TTY. Binary frames carry terminal bytes both ways; text frames are JSON control messages:
// client -> server {"type":"resize","cols":N,"rows":N}; server -> client {"type":"exit","code":N} last.
// Each session is an app event: who, from where, which container, how long, the exit code; never what was
// typed (nor the command's arguments, which may hold a secret).
import type { WSContext, WSEvents } from 'hono/ws';
import { conflict, DomainError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { addAppEvent } from '../store/deploys.js';
import type { AppContainer, TerminalPort, TerminalSession } from '../runtime/terminal.js';
import { requireTerminalAccess, type TerminalUser } from './access.js';

export interface TerminalDeps {
  db: Db;
  log: Logger;
  terminal: TerminalPort;
  now: () => Date;
}

export interface TerminalRequest {
  app: { id: number; name: string };
  user: TerminalUser;
  via: 'ui' | 'cli';
  cmd: string[];
  /** Replica slot; default the first of the newest deploy. */
  replica?: number;
  cols: number;
  rows: number;
}

/**
 * The container the session attaches to; 403 for a non-administrator, 409 when none runs, 409
 * `replica_on_other_node` when it runs on a Swarm node svc cannot reach now, its agent not running (without
 * `replica`, a reachable one is preferred).
 */
export async function pickContainer(deps: TerminalDeps, req: TerminalRequest): Promise<AppContainer> {
  requireTerminalAccess(req.user);
  const running = await deps.terminal.appContainers(req.app.id);
  const found = req.replica === undefined ? (running.find((c) => !c.unreachable) ?? running[0]) : running.find((c) => c.slot === req.replica);
  if (!found) {
    throw conflict(req.replica === undefined ? `app ${req.app.name} has no running container` : `app ${req.app.name} has no running replica ${req.replica}`);
  }
  if (found.unreachable) {
    throw new DomainError(
      'conflict',
      'replica_on_other_node',
      `replica ${found.slot} of app ${req.app.name} (${found.name}) runs on node ${found.node ?? '?'}, which svc cannot reach now: ${found.unreachable}`,
      { node: found.node, replica: found.slot },
    );
  }
  return found;
}

const clampSize = (n: unknown, fallback: number) => (typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 1000 ? n : fallback);

/** The WebSocket events of a session into `container`. */
export function terminalEvents(deps: TerminalDeps, req: TerminalRequest, container: AppContainer): WSEvents {
  let session: TerminalSession | undefined;
  // Keys typed while the exec is still being created are kept and written once it exists (bounded).
  let early: Buffer[] | undefined = [];
  let closed = false;
  const opened = deps.now().getTime();
  const who = `${req.user.username} (${req.via})`;
  const finish = (ws: WSContext | undefined, code: number | undefined) => {
    if (closed) return;
    closed = true;
    session?.close();
    const seconds = Math.round((deps.now().getTime() - opened) / 1000);
    addAppEvent(deps.db, req.app.id, 'terminal', `terminal of ${who} in ${container.name} closed after ${seconds} s${code === undefined ? '' : ` (exit ${code})`}`);
    if (ws && ws.readyState === 1) {
      if (code !== undefined) ws.send(JSON.stringify({ type: 'exit', code }));
      ws.close(1000, 'session ended');
    }
  };
  return {
    async onOpen(_evt, ws) {
      addAppEvent(deps.db, req.app.id, 'terminal', `terminal opened by ${who} in ${container.name} (${req.cmd[0]})`);
      try {
        session = await deps.terminal.open(container, req.cmd, { cols: req.cols, rows: req.rows });
      } catch (err) {
        deps.log.warn('terminal exec failed', { app: req.app.name, container: container.name, error: err instanceof Error ? err.message : String(err) });
        ws.send(JSON.stringify({ type: 'error', error: 'the container refused the session (is the command in its image?)' }));
        return finish(ws, -1);
      }
      if (closed) return session.close();
      for (const b of early ?? []) session.write(b);
      early = undefined;
      session.onData((chunk) => ws.readyState === 1 && ws.send(new Uint8Array(chunk)));
      session.onExit((code) => finish(ws, code));
    },
    onMessage(evt) {
      const data = evt.data;
      if (typeof data === 'string') {
        try {
          const m = JSON.parse(data) as { type?: string; cols?: unknown; rows?: unknown };
          if (m.type === 'resize') void session?.resize(clampSize(m.cols, req.cols), clampSize(m.rows, req.rows));
        } catch {
          /* not a control message: ignored */
        }
        return;
      }
      const bytes = data instanceof ArrayBuffer ? Buffer.from(data) : Buffer.from(data as unknown as Uint8Array);
      if (session) session.write(bytes);
      else if (early && early.length < 1024) early.push(bytes);
    },
    onClose() {
      finish(undefined, undefined);
    },
    onError() {
      finish(undefined, undefined);
    },
  };
}

/** Terminal size and replica from query strings (defaults 80x24), without trusting them. */
export function sizeOf(q: (k: string) => string | undefined) {
  const n = (k: string) => {
    const v = q(k);
    return v !== undefined && /^[0-9]{1,4}$/.test(v) ? Number(v) : undefined;
  };
  return { cols: clampSize(n('cols'), 80), rows: clampSize(n('rows'), 24), replica: n('replica') };
}
