// `ports` and `expose` in their short and long syntaxes (compose-spec 05-services.md "ports"). A published
// TCP port becomes the service's route (svc's Caddy listens on it; Docker publishes nothing); a port bound to
// loopback, or without a host port, stays inside the stack.
import { isObject, type Report } from './report.js';

export interface PortMapping {
  target: number[];
  published?: number[];
  hostIp?: string;
  protocol: string;
}

const MAX_RANGE = 1000;

function range(text: string): number[] | undefined {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (from < 1 || to > 65535 || to < from || to - from >= MAX_RANGE) return undefined;
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** One `ports` entry: `80`, `"8080:80"`, `"127.0.0.1:8080:80/tcp"`, `"[::1]:6001:6001"`, `"9090-9091:8080-8081"`, or the long form. */
export function parsePort(entry: unknown): PortMapping | undefined {
  if (typeof entry === 'number') return Number.isInteger(entry) && entry >= 1 && entry <= 65535 ? { target: [entry], protocol: 'tcp' } : undefined;
  if (isObject(entry)) {
    const target = range(String(entry.target ?? ''));
    if (!target) return undefined;
    const published = entry.published === undefined || entry.published === null || entry.published === '' ? undefined : range(String(entry.published));
    if (entry.published !== undefined && entry.published !== null && entry.published !== '' && !published) return undefined;
    return { target, published, hostIp: entry.host_ip === undefined ? undefined : String(entry.host_ip), protocol: String(entry.protocol ?? 'tcp').toLowerCase() };
  }
  if (typeof entry !== 'string') return undefined;
  let text = entry.trim();
  let protocol = 'tcp';
  const slash = text.lastIndexOf('/');
  if (slash >= 0) {
    protocol = text.slice(slash + 1).toLowerCase();
    text = text.slice(0, slash);
  }
  let hostIp: string | undefined;
  const v6 = /^\[([0-9a-fA-F:.]+)\]:(.*)$/.exec(text);
  if (v6) {
    hostIp = v6[1];
    text = v6[2];
  }
  const parts = text.split(':');
  if (!hostIp && parts.length === 3) hostIp = parts.shift();
  if (parts.length > 2 || (v6 && parts.length !== 2)) return undefined;
  const target = range(parts[parts.length - 1]);
  const published = parts.length === 2 && parts[0] !== '' ? range(parts[0]) : undefined;
  if (!target || (parts.length === 2 && parts[0] !== '' && !published)) return undefined;
  if (published && published.length !== target.length && published.length !== 1) return undefined;
  return { target, published, hostIp, protocol };
}

/** `expose` entries: `3000`, `"3000-3002"`, `"3000/tcp"`. */
export function parseExpose(entries: unknown[], service: string, report: Report): number[] {
  const out: number[] = [];
  entries.forEach((e, i) => {
    const ports = range(String(e).replace(/\/(tcp|udp|sctp)$/i, ''));
    if (!ports) report.refuse(service, `expose[${i}]`, `"${String(e)}" is not a port or a range of at most ${MAX_RANGE} ports`);
    else out.push(...ports);
  });
  return out;
}

const LOOPBACK = /^(127\.|::1$|localhost$)/;

export interface RoutedPorts {
  route?: { publishedPort: number; port: number };
  expose: number[];
}

/** The route and the ports seen inside the stack, from the `ports` list; refusals and warnings on the report. */
export function routePorts(entries: unknown[], service: string, report: Report): RoutedPorts {
  const expose: number[] = [];
  let route: RoutedPorts['route'];
  entries.forEach((entry, i) => {
    const key = `ports[${i}]`;
    const p = parsePort(entry);
    if (!p) return report.refuse(service, key, `${JSON.stringify(entry)} is not a port mapping ([HOST_IP:][PUBLISHED:]TARGET[/PROTOCOL])`);
    if (p.protocol !== 'tcp') return report.refuse(service, key, `${p.protocol} ports cannot be routed: svc routes TCP through its proxy`);
    expose.push(...p.target);
    if (!p.published) return report.warn(service, key, `port ${p.target.join(', ')} has no published port: reachable inside the stack only`);
    if (p.hostIp && LOOPBACK.test(p.hostIp)) return report.warn(service, key, `bound to ${p.hostIp}: kept inside the stack, not routed`);
    if (p.published.length > 1 || p.target.length > 1) return report.refuse(service, key, 'a published range cannot be routed: svc routes one port per service');
    if (route) return report.warn(service, key, `svc routes one port per service (${route.publishedPort}); port ${p.target[0]} is reachable inside the stack only`);
    if (p.hostIp && p.hostIp !== '0.0.0.0' && p.hostIp !== '::') report.warn(service, key, `host_ip ${p.hostIp} is not applied: svc's proxy listens on its own addresses`);
    route = { publishedPort: p.published[0], port: p.target[0] };
  });
  return { route, expose };
}
