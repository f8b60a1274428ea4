// Health probes that reach Swarm tasks. A task's address is on the instance's overlay network, which the
// manager's host (where the daemon runs) is not on: only containers attached to the overlay reach it. So
// the probe runs inside a small helper container of this instance on the manager, attached to the overlay
// (`<instance>-probe`, busybox's `nc`, kept running), through `exec`: the request goes from the overlay,
// exactly the path the proxy takes, to the task wherever it runs. One exec costs tens of milliseconds,
// which the health check's 25 ms..250 ms polling absorbs. The URL's parts reach the helper as separate
// arguments of a fixed script, never spliced into a shell string.
import { LABELS, type Runtime } from './runtime.js';

export interface HelperProbeOptions {
  runtime: Runtime;
  instance: string;
  network: string;
  /** An image with /bin/busybox (the proxy image caddy:2 has it; so do the test images). */
  image: string;
}

export const probeHelperName = (instance: string) => `${instance}-probe`;

/** GET over HTTP/1.0 through busybox nc; prints the status line only. $1 host, $2 port, $3 path, $4 seconds. */
const SCRIPT = 'printf "GET %s HTTP/1.0\\r\\nHost: %s\\r\\nUser-Agent: svc-health-check\\r\\n\\r\\n" "$3" "$1" | /bin/busybox nc -w "$4" "$1" "$2" | /bin/busybox head -n 1';

/** Pure: the status code of an HTTP status line, or undefined. */
export function statusOfLine(line: string): number | undefined {
  const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(line.trim());
  return m ? Number(m[1]) : undefined;
}

/**
 * Connects and closes at once: exit 0 when the port is open. $1 host, $2 port, $3 seconds. `-z` is in
 * Alpine's busybox (nc with NC_EXTRA) but not Debian's (its small nc: "invalid option -- 'z'", exit 1, so a
 * managed service on a Swarm never became ready with such a probe image); there, `-e` runs a program that
 * exits at once in place of nc once connected (exit 0; refused or timed out: 1).
 */
export const TCP_SCRIPT = '/bin/busybox nc -z -w "$3" "$1" "$2" 2>/dev/null || /bin/busybox nc -w "$3" "$1" "$2" -e /bin/busybox true';

export interface HelperProbe {
  (url: string, timeoutMs: number): Promise<number | undefined>;
  /** TCP connect check from the overlay (a managed service's readiness gate). */
  tcpOpen(host: string, port: number, timeoutMs: number): Promise<boolean>;
}

/** A probe `(url, timeoutMs) -> status | undefined` that runs in the helper; the helper is (re)made on demand. */
export function createHelperProbe(o: HelperProbeOptions): HelperProbe {
  const name = probeHelperName(o.instance);
  let ready: Promise<void> | undefined;
  const ensure = async () => {
    const found = await o.runtime.inspect(name);
    if (found?.running) return;
    if (found) await o.runtime.remove(name);
    await o.runtime.ensureNetwork(o.network);
    await o.runtime.run({
      name,
      image: o.image,
      entrypoint: ['/bin/busybox', 'sleep', '2147483647'],
      network: o.network,
      init: true,
      labels: { [LABELS.managed]: 'true', [LABELS.instance]: o.instance, [LABELS.role]: 'probe' },
    });
  };
  const helper = async () => {
    ready ??= ensure().finally(() => (ready = undefined));
    await ready;
  };
  const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));
  const probe = (async (url: string, timeoutMs: number) => {
    const u = new URL(url);
    if (u.protocol !== 'http:') return undefined;
    try {
      await helper();
      const r = await o.runtime.exec(name, ['/bin/busybox', 'sh', '-c', SCRIPT, 'probe', u.hostname, u.port || '80', `${u.pathname}${u.search}`, seconds(timeoutMs)]);
      return statusOfLine(r.stdout);
    } catch {
      return undefined; // no answer: the health check waits or times out, as with a direct probe
    }
  }) as HelperProbe;
  probe.tcpOpen = async (host, port, timeoutMs) => {
    try {
      await helper();
      return (await o.runtime.exec(name, ['/bin/busybox', 'sh', '-c', TCP_SCRIPT, 'tcp', host, String(port), seconds(timeoutMs)])).exitCode === 0;
    } catch {
      return false;
    }
  };
  return probe;
}
