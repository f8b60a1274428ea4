// The pure readers behind "one taken port never blocks other routes": the host's listening ports from
// the kernel's tables, the port of a Caddy load rejected for a taken port, the ports a Caddy config holds.
import { describe, expect, it } from 'vitest';
import { parseListening, listeningSockets } from '../../../src/proxy/listening.js';
import { bindFailurePort, listenerPortsOf } from '../../../src/proxy/bind-errors.js';
import { createHeldPorts, createPortInUse, proxyIsLocal } from '../../../src/proxy/held-ports.js';
import { createServer } from 'node:net';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0000000000000000 100 0 0 10 0
   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 100 0 0 10 0
   2: 0100007F:0CEA 0100007F:D3A2 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0000000000000000 20 4 30 10 -1
   3: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 100 0 0 10 0
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5 1 0000000000000000 100 0 0 10 0
`;

describe('listening ports', () => {
  it('counts LISTEN sockets per port, IPv4 and IPv6, and ignores established connections', () => {
    expect(parseListening(TCP)).toEqual(new Map([[3306, 1], [2024, 2]]));
    expect(parseListening(TCP6)).toEqual(new Map([[8080, 1]]));
    expect(parseListening('')).toEqual(new Map());
  });

  it('sees a real listener on loopback, and not after it closed', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    try {
      expect(listeningSockets()?.get(port)).toBe(1);
    } finally {
      await new Promise((r) => srv.close(r));
    }
    expect(listeningSockets()?.get(port)).toBeUndefined();
    expect(listeningSockets(['/nonexistent/tcp'])).toBeUndefined();
  });

  it('portInUse skips the ports the proxy holds, and says false when it cannot tell', () => {
    const held = createHeldPorts();
    const inUse = createPortInUse(held, () => new Set([2024, 8080]));
    expect([inUse(2024), inUse(8080), inUse(9000)]).toEqual([true, true, false]);
    held.set([8080]);
    expect([inUse(2024), inUse(8080)]).toEqual([true, false]);
    expect(createPortInUse(held, () => undefined)(2024)).toBe(false);
  });

  it('applies to a Caddy whose admin API is on loopback only', () => {
    expect(['http://127.0.0.1:2019', 'http://localhost:2019', 'http://[::1]:2019'].map(proxyIsLocal)).toEqual([true, true, true]);
    expect(['http://10.0.0.5:2019', 'http://caddy.lan:2019'].map(proxyIsLocal)).toEqual([false, false]);
  });
});

describe('Caddy bind failures and listeners', () => {
  it('finds the port of a load rejected for a taken port (Caddy 2.6.2 text), nothing in other rejections', () => {
    const detail = '{"error":"loading config: loading new config: http app module: start: listening on :23902: listen tcp :23902: bind: address already in use"}';
    expect(bindFailurePort(detail)).toBe(23902);
    expect(bindFailurePort('listening on 0.0.0.0:8080: listen tcp 0.0.0.0:8080: bind: address already in use')).toBe(8080);
    expect(bindFailurePort('loading config: json: cannot unmarshal string')).toBeUndefined();
    expect(bindFailurePort('listen tcp :80: bind: permission denied')).toBeUndefined();
  });

  it('lists every port the servers of a config listen on', () => {
    const config = {
      apps: { http: { servers: { a: { listen: [':8080'] }, b: { listen: ['tcp/0.0.0.0:9000', '[::]:9001'] }, c: { listen: [':7000-7002'] }, d: {} } } },
    };
    expect([...listenerPortsOf(config)].sort()).toEqual([7000, 7001, 7002, 8080, 9000, 9001]);
    expect(listenerPortsOf(null)).toEqual(new Set());
    expect(listenerPortsOf({ admin: {} })).toEqual(new Set());
  });
});
