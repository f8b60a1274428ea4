// The last-resort guard: a connection's failure is logged and survived, anything else ends the process.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { installProcessGuard, isSurvivable } from '../../../src/process-guard.js';

const sysError = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('isSurvivable', () => {
  it.each([
    ['getaddrinfo ENOTFOUND web (the crash of issue 12)', Object.assign(sysError('ENOTFOUND', 'getaddrinfo ENOTFOUND web'), { syscall: 'getaddrinfo', hostname: 'web' })],
    ['a reset socket', sysError('ECONNRESET', 'read ECONNRESET')],
    ['a reset response ("aborted")', sysError('ECONNRESET', 'aborted')],
    ['a broken pipe', sysError('EPIPE')],
    ['a refused connection', sysError('ECONNREFUSED')],
    ['a premature close', sysError('ERR_STREAM_PREMATURE_CLOSE')],
    ['an undici socket error', sysError('UND_ERR_SOCKET')],
    ['an abort', Object.assign(new Error('This operation was aborted'), { name: 'AbortError' })],
  ])('survives %s', (_what, err) => expect(isSurvivable(err)).toBe(true));

  it.each([
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a RangeError', new RangeError('Invalid array length')],
    ['a database error', sysError('SQLITE_CORRUPT')],
    ['a full disk', sysError('ENOSPC')],
    ['no free file descriptors', sysError('EMFILE')],
    ['a port in use', sysError('EADDRINUSE')],
    ['a string', 'boom'],
    ['undefined', undefined],
    ['an error-like object that is not an Error', { code: 'ECONNRESET', message: 'x' }],
  ])('does not survive %s', (_what, err) => expect(isSurvivable(err)).toBe(false));
});

describe('installProcessGuard', () => {
  function setup() {
    const proc = new EventEmitter();
    const lines: Record<string, unknown>[] = [];
    const exits: number[] = [];
    const remove = installProcessGuard({
      log: createLogger('debug', {}, (l) => lines.push(JSON.parse(l))),
      proc: proc as never,
      exit: (code) => exits.push(code),
    });
    return { proc, lines, exits, remove };
  }

  it('logs a connection error with its code and keeps the process', () => {
    const { proc, lines, exits } = setup();
    proc.emit('uncaughtException', sysError('ENOTFOUND', 'getaddrinfo ENOTFOUND web'));
    proc.emit('unhandledRejection', sysError('ECONNRESET'));
    expect(exits).toEqual([]);
    expect(lines.map((l) => [l.level, l.code])).toEqual([['warn', 'ENOTFOUND'], ['warn', 'ECONNRESET']]);
    expect(lines[0]!.msg).toMatch(/uncaught exception .*keeps serving/);
  });

  it('logs anything else with its stack and exits 1', () => {
    const { proc, lines, exits } = setup();
    proc.emit('uncaughtException', new TypeError('x is not a function'));
    proc.emit('unhandledRejection', 'a bare string');
    expect(exits).toEqual([1, 1]);
    expect(lines[0]).toMatchObject({ level: 'error', error: 'x is not a function' });
    expect(String(lines[0]!.stack)).toContain('TypeError');
  });

  it('removes its listeners', () => {
    const { proc, remove } = setup();
    expect(proc.listenerCount('uncaughtException')).toBe(1);
    remove();
    expect(proc.listenerCount('uncaughtException') + proc.listenerCount('unhandledRejection')).toBe(0);
  });
});
