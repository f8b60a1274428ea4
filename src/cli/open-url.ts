// Pure: the one line `svc serve` prints once it listens, so a new user knows which address to open (and,
// before any admin exists, that the first page is the setup wizard). SVC_PUBLIC_URL wins; a wildcard
// bind address is shown as the host's first external IPv4 address (what a browser elsewhere can reach),
// else 127.0.0.1.
export interface OpenUrlInput {
  publicUrl?: string;
  /** SVC_HOST as configured (0.0.0.0, ::, or one address). */
  host: string;
  port: number;
  /** The host's external IPv4 addresses, in interface order. */
  externalIps: string[];
  setupRequired: boolean;
}

export function openUrl(o: Pick<OpenUrlInput, 'publicUrl' | 'host' | 'port' | 'externalIps'>): string {
  if (o.publicUrl) return o.publicUrl.replace(/\/+$/, '') + '/';
  const wildcard = o.host === '0.0.0.0' || o.host === '::' || o.host === '';
  const host = wildcard ? (o.externalIps[0] ?? '127.0.0.1') : o.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${o.port}/`;
}

export function readyLine(o: OpenUrlInput): string {
  const url = openUrl(o);
  return o.setupRequired
    ? `svc is ready: open ${url}setup to create the first admin account (then ${url})\n`
    : `svc is ready: open ${url}\n`;
}
