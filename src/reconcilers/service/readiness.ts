// The readiness check of a service (SPEC.md 2.5), run once per reconcile pass: the catalog's command in the
// container, or an HTTP GET to the container's address on the service network. One quick look, no loop:
// the reconciler requeues while it says no.
import { connect } from 'node:net';
import type { Readiness } from '../../catalog/catalog.js';
import type { Runtime } from '../../runtime/runtime.js';

/** True when `host:port` accepts a TCP connection within `timeoutMs`. */
export type TcpOpen = (host: string, port: number, timeoutMs: number) => Promise<boolean>;

export const tcpOpen: TcpOpen = (host, port, timeoutMs) =>
  new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });

const HTTP_TIMEOUT_MS = 2_000;

/** True when the service answers its readiness check now. Never throws: an error is "not ready". */
export async function checkReady(
  runtime: Runtime,
  httpGet: (url: string, timeoutMs: number) => Promise<number | undefined>,
  container: string,
  network: string,
  r: Readiness,
  tcp: TcpOpen = tcpOpen,
): Promise<boolean> {
  try {
    if (r.kind === 'exec') {
      if (r.tcpPort !== undefined) {
        const info = await runtime.inspect(container, network);
        if (!info?.running || !info.address || !(await tcp(info.address, r.tcpPort, 500))) return false;
      }
      const res = await runtime.exec(container, r.exec.cmd, r.exec.env ? { env: r.exec.env } : undefined);
      return res.exitCode === 0 && (r.expect === undefined || res.stdout.includes(r.expect));
    }
    const info = await runtime.inspect(container, network);
    if (!info?.running || !info.address) return false;
    const status = await httpGet(`http://${info.address}:${r.port}${r.path}`, HTTP_TIMEOUT_MS);
    // Any answer below 500 means the listener is up; Garage's own layout and key setup follow readiness.
    return status !== undefined && status < 500;
  } catch {
    return false;
  }
}
