// Pure: the two facts the proxy reconciler needs to keep one taken port from blocking every other route:
// which port a load Caddy rejected could not bind, and which ports Caddy's config already listens on.

/**
 * The port of a Caddy load rejected because a listener could not bind (2.6.2 says: `loading new config:
 * http app module: start: listening on :2024: listen tcp :2024: bind: address already in use`); undefined
 * for any other rejection.
 */
export function bindFailurePort(detail: string): number | undefined {
  const m = /listening on \S*?:(\d+): .*?address already in use/.exec(detail) ?? /listen tcp \S*?:(\d+): bind: address already in use/.exec(detail);
  return m ? Number(m[1]) : undefined;
}

/** Every port the servers of a Caddy config listen on (`:8080`, `tcp/0.0.0.0:8080`, `[::]:8080`, ranges). */
export function listenerPortsOf(config: unknown): Set<number> {
  const out = new Set<number>();
  const servers = (config as { apps?: { http?: { servers?: Record<string, { listen?: unknown }> } } } | null)?.apps?.http?.servers;
  for (const s of Object.values(servers ?? {})) {
    for (const addr of Array.isArray(s?.listen) ? s.listen : []) {
      const m = typeof addr === 'string' ? /:(\d+)(?:-(\d+))?$/.exec(addr) : null;
      if (!m) continue;
      const from = Number(m[1]);
      const to = m[2] ? Math.min(Number(m[2]), from + 1000) : from;
      for (let p = from; p <= to; p++) out.add(p);
    }
  }
  return out;
}
