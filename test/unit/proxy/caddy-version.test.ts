import { describe, expect, it } from 'vitest';
import { createCaddyWatch, featuresOf, listeningInodes, parseCaddyVersion } from '../../../src/proxy/caddy-version.js';
import type { Logger } from '../../../src/log.js';

describe('which Caddy svc drives', () => {
  it.each([
    ['v2.11.4 h1:abc=', '2.11.4'],
    ['2.6.2', '2.6.2'],
    ['v2.12.0-beta.1 h1:x', '2.12.0'],
    ['caddy: command not found', undefined],
  ])('`caddy version` %j is %s', (out, v) => expect(parseCaddyVersion(out)).toBe(v));

  it.each([
    ['2.6.2', false],
    ['2.11.1', false],
    ['2.11.2', true],
    ['2.11.4', true],
    ['2.12.0', true],
    ['3.0.0', true],
    [undefined, false],
  ])('Caddy %s resends bodies on a retried dial: %s', (v, resends) => expect(featuresOf(v).resendsBodies).toBe(resends));

  it.each([
    ['2.6.2', false],
    ['2.6.4', false],
    ['2.7.0', true],
    ['2.11.4', true],
    ['3.0.0', true],
    [undefined, false],
  ])('Caddy %s takes stream_close_delay: %s', (v, takes) => expect(featuresOf(v).streamCloseDelay).toBe(takes));

  it.each([
    ['2.6.2', false],
    ['2.7.0', true],
    ['2.11.4', true],
    [undefined, false],
  ])('Caddy %s takes request_buffers: %s', (v, takes) => expect(featuresOf(v).requestBuffers).toBe(takes));

  it('finds the listening socket of a port in /proc/net/tcp, not a connection to it', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:07E3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0',
      '   1: 0100007F:D2F0 0100007F:07E3 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1',
      '   2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0',
    ].join('\n');
    expect(listeningInodes(text, 2019)).toEqual(['4242']);
    expect(listeningInodes(text, 8080)).toEqual(['4444']);
    expect(listeningInodes(text, 9)).toEqual([]);
  });

  it('logs the Caddy it learns once; until then, and for a Caddy it cannot tell, the oldest limits', async () => {
    const lines: unknown[] = [];
    const log = { info: (msg: string, f: unknown) => lines.push([msg, f]) } as unknown as Logger;
    let looks = 0;
    // A Caddy on another machine: no local socket to watch, so it is asked once.
    const remote = createCaddyWatch('http://10.0.0.9:2019', log, async () => (looks++, { version: undefined, pid: undefined, features: featuresOf(undefined) }));
    expect(remote.known().resendsBodies).toBe(false);
    expect((await remote.features()).resendsBodies).toBe(false);
    await remote.features();
    expect(looks).toBe(1);
    expect(lines).toEqual([['proxy caddy', expect.objectContaining({ version: 'unknown', admin: 'http://10.0.0.9:2019' })]]);
    const local = createCaddyWatch('http://127.0.0.1:1', log, async () => ({ version: '2.11.4', pid: 7, features: featuresOf('2.11.4') }));
    expect((await local.features()).resendsBodies).toBe(true);
    expect(local.known().resendsBodies).toBe(true);
    expect(lines[1]).toEqual(['proxy caddy', expect.objectContaining({ version: '2.11.4', pid: 7, resendsBodies: true })]);
  });
});
