// The terminal session over a fake TerminalPort and a real :memory: SQLite: the admin check refuses before
// any exec, keys typed before the exec exists are not lost, resizes reach the exec, the exit closes the
// socket with the code, and the events name who and where but never what was typed or the arguments.
import { describe, expect, it } from 'vitest';
import type { WSContext } from 'hono/ws';
import { pickContainer, terminalEvents } from '../../../src/terminal/session.js';
import type { TerminalPort, TerminalSession } from '../../../src/runtime/terminal.js';
import { listAppEvents } from '../../../src/store/deploys.js';
import { silentLogger } from '../../../src/log.js';
import { createApp } from '../../../src/desired/apps.js';
import { memoryDb } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';

function fakePort() {
  const written: string[] = [];
  const resized: [number, number][] = [];
  let exit: (code: number) => void = () => {};
  let release: () => void = () => {};
  const opened = new Promise<void>((r) => (release = r));
  const port: TerminalPort = {
    async appContainers() {
      return [{ id: 'c1', name: 'inst-web-1', slot: 0, deployId: 1 }];
    },
    async open() {
      await opened; // the exec is created only when the test says so
      const s: TerminalSession = {
        onData: () => {},
        onExit: (fn) => void (exit = fn),
        write: (d) => void written.push(String(d)),
        resize: async (c, r) => void resized.push([c, r]),
        close: () => {},
      };
      return s;
    },
  };
  return { port, written, resized, release, exit: (c: number) => exit(c) };
}

function fakeSocket() {
  const sent: unknown[] = [];
  let closedWith: number | undefined;
  const ws = { readyState: 1, send: (d: unknown) => void sent.push(d), close: (code?: number) => void (closedWith = code) } as unknown as WSContext;
  return { ws, sent, closed: () => closedWith };
}

describe('terminal session', () => {
  it('refuses a non-administrator before any exec', async () => {
    const db = memoryDb();
    const f = fakePort();
    const req = { app: { id: 1, name: 'web' }, user: { id: 2, username: 'viewer', role: 'viewer' as const }, via: 'ui' as const, cmd: ['sh'], cols: 80, rows: 24 };
    // A developer, who deploys and edits variables, may not open one either: it is the manage action's.
    const dev = { ...req, user: { id: 3, username: 'dev', role: 'developer' as const } };
    await expect(pickContainer({ db, log: silentLogger, terminal: f.port, now: () => new Date() }, dev)).rejects.toMatchObject({ code: 'terminal_forbidden' });
    await expect(pickContainer({ db, log: silentLogger, terminal: f.port, now: () => new Date() }, req)).rejects.toMatchObject({ code: 'terminal_forbidden' });
    db.$client.close();
  });

  it('keeps early keys, resizes, closes with the exit code and records who and where only', async () => {
    const db = memoryDb();
    const app = createApp(commandCtx(db), { name: 'web', image_ref: 'x/y:1', fallback_port: 18080 }, 'api');
    const f = fakePort();
    const deps = { db, log: silentLogger, terminal: f.port, now: () => new Date() };
    const req = { app: { id: app.id, name: 'web' }, user: { id: 1, username: 'admin', role: 'owner' as const }, via: 'cli' as const, cmd: ['psql', '--password=hunter2'], cols: 80, rows: 24 };
    const ev = terminalEvents(deps, req, await pickContainer(deps, req));
    const s = fakeSocket();
    const opening = ev.onOpen!(new Event('open'), s.ws) as unknown as Promise<void>;
    ev.onMessage!(new MessageEvent('message', { data: new TextEncoder().encode('echo secret-typed\n').buffer }), s.ws);
    f.release();
    await opening;
    ev.onMessage!(new MessageEvent('message', { data: JSON.stringify({ type: 'resize', cols: 120, rows: 40 }) }), s.ws);
    expect(f.written).toEqual(['echo secret-typed\n']);
    expect(f.resized).toEqual([[120, 40]]);
    f.exit(3);
    expect(s.sent.at(-1)).toBe(JSON.stringify({ type: 'exit', code: 3 }));
    expect(s.closed()).toBe(1000);
    const messages = listAppEvents(db, app.id).filter((e) => e.step === 'terminal').map((e) => e.message);
    expect(messages).toEqual([expect.stringMatching(/^terminal opened by admin \(cli\) in inst-web-1 \(psql\)$/), expect.stringMatching(/closed after \d+ s \(exit 3\)$/)]);
    expect(messages.join()).not.toMatch(/hunter2|secret-typed/);
    db.$client.close();
  });
});
