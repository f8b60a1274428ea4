// The readiness check of a service (SPEC.md 2.5), run once per reconcile pass: the catalog's command in the
// container, or an HTTP GET to the container's address on the service network. One quick look, no loop:
// the reconciler requeues while it says no.
import type { Readiness } from '../../catalog/catalog.js';
import type { Runtime } from '../../runtime/runtime.js';

const HTTP_TIMEOUT_MS = 2_000;

/** True when the service answers its readiness check now. Never throws: an error is "not ready". */
export async function checkReady(
  runtime: Runtime,
  httpGet: (url: string, timeoutMs: number) => Promise<number | undefined>,
  container: string,
  network: string,
  r: Readiness,
): Promise<boolean> {
  try {
    if (r.kind === 'exec') {
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
