// Where links in messages point: SVC_PUBLIC_URL, else this host's first external IPv4 address and the
// port svc listens on (what a browser elsewhere can reach), else loopback.
import { networkInterfaces } from 'node:os';

export function messageBaseUrl(publicUrl: string | undefined, host: string, port: number): string {
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  const h = wildcard ? (external ?? '127.0.0.1') : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}`;
}
