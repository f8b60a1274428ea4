// The port listeners svc's proxy holds now, as the proxy reconciler last loaded or saw them. The app
// command's `port_in_use` check skips them: a port the proxy itself still listens on (an app just
// deleted or moved, its listener not yet dropped) is not "taken by another process".
import { listeningPorts } from './listening.js';

export interface HeldPorts {
  get(): ReadonlySet<number>;
  set(ports: Iterable<number>): void;
}

export function createHeldPorts(): HeldPorts {
  let held: ReadonlySet<number> = new Set();
  return { get: () => held, set: (ports) => void (held = new Set(ports)) };
}

/** The commands' `portInUse`: true when another process on this host listens on `port` (false when svc cannot tell). */
export function createPortInUse(held: HeldPorts, listening: () => ReadonlySet<number> | undefined = listeningPorts): (port: number) => boolean {
  return (port) => !held.get().has(port) && (listening()?.has(port) ?? false);
}

/** True when Caddy's admin API is on loopback: Caddy shares this host's ports, so the checks apply. */
export function proxyIsLocal(adminUrl: string): boolean {
  const h = new URL(adminUrl).hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\./.test(h);
}
