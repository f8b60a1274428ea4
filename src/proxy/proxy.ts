// The Proxy port: desired routes in, the reverse proxy converged to them. Implementations must write
// nothing when the routes did not change (a config load closes idle client keep-alive connections; see
// ../shared/notes/zero-downtime-switch.md), so a blue/green switch never reloads the proxy: it flips the
// DNS answer that the route's dynamic upstream resolves (src/dns/).

export type Upstream =
  /** Resolved through svc's DNS responder: `<app>.svc.internal.` answers the live container's address. */
  | { kind: 'dns'; name: string; port: number }
  /**
   * The Swarm edge relay (src/proxy/edge-config.ts): a `dns` upstream rewritten by the edge wrapper, never
   * made by the route plan. `key` names the upstream to the relay; `socket` is the relay's unix socket.
   */
  | { kind: 'edge'; socket: string; key: string }
  /** A fixed upstream, for `external_service` apps: `http(s)://host:port`. */
  | { kind: 'url'; url: string }
  /**
   * No container to send to: the app never went live (or its container is gone) and no deploy is under way.
   * Answered at once with a 503 page instead of a request waiting out the dynamic upstream's try_duration.
   */
  | { kind: 'none' };

export interface Route {
  app: string;
  mode: 'domain' | 'port';
  /** Host name (domain mode). */
  domain?: string;
  /** Listener port (port mode). */
  port?: number;
  upstream: Upstream;
  /**
   * The app's drain_seconds (issue 37): how long a config load keeps the route's open streams on a Caddy
   * that can (stream_close_delay, Caddy >= 2.7); unset or 0: Caddy's default (closed at the load).
   */
  drainSeconds?: number;
}

export interface Proxy {
  /** Converges the proxy to exactly these routes; a no-op when they are what is already loaded. */
  apply(routes: Route[]): Promise<void>;
  /** Cheap: true when the proxy answers and still has exactly the config of these routes (false when unreachable). */
  serves(routes: Route[]): Promise<boolean>;
  /**
   * The ports the proxy's listeners hold now (every server of the config, svc's or not). Optional: without
   * it the proxy reconciler cannot tell a port the proxy holds from one another process holds, and checks none.
   * `apply` throws ProxyBindError (admin.ts) when a listener could not bind.
   */
  heldPorts?(): Promise<Set<number>>;
  /** In-flight request count per upstream address (`host:port`), for draining an old container. */
  upstreamRequests(): Promise<Map<string, number>>;
}

/** The DNS name an app's route resolves; the trailing dot matters to Caddy (absolute name). */
export const appDnsName = (app: string) => `${app}.svc.internal.`;
