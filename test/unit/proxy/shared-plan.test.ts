// The pure part of the shared-Caddy adapter: which single admin write comes next, and never one that
// touches a server or policy that is not this instance's.
import { describe, expect, it } from 'vitest';
import { buildServers, tlsLogConfig } from '../../../src/proxy/config.js';
import { nextSharedWrite, sharedNames, sharedTlsPolicy, type SharedWanted } from '../../../src/proxy/shared-plan.js';
import type { Route } from '../../../src/proxy/proxy.js';

const opts = { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'internal' as const, dnsPort: 15353 };
const names = sharedNames('svc');
const port = (app: string, p: number): Route => ({ app, mode: 'port', port: p, upstream: { kind: 'dns', name: `${app}.svc.internal.`, port: 3000 } });
const domain = (app: string, d: string): Route => ({ app, mode: 'domain', domain: d, upstream: { kind: 'dns', name: `${app}.svc.internal.`, port: 3000 } });
const wantedFor = (routes: Route[]): SharedWanted => {
  const { servers, domains } = buildServers(routes, opts, names);
  return { servers, tls: sharedTlsPolicy(domains, opts, names.tlsId), internalCa: true };
};
const operator = { listen: [':8443'], routes: [] };

/** Applies a write to a config the way Caddy's admin API would (enough of it for these paths). */
function applyWrite(config: any, w: NonNullable<ReturnType<typeof nextSharedWrite>>): any {
  const c = structuredClone(config ?? {});
  if (w.path === '/config/') return w.body;
  if (w.path.startsWith('/id/')) {
    const list = c.apps.tls.automation.policies as any[];
    const i = list.findIndex((p) => p['@id'] === w.path.slice(4));
    if (w.method === 'DELETE') list.splice(i, 1);
    else list[i] = w.body;
    return c;
  }
  const keys = w.path.replace('/config/', '').split('/').map(decodeURIComponent);
  let at = c;
  for (const k of keys.slice(0, -1)) at = at[k];
  const last = keys.at(-1)!;
  if (w.method === 'DELETE') delete at[last];
  else if (w.method === 'PUT' && Array.isArray(at)) at.splice(Number(last), 0, w.body);
  else at[last] = w.body;
  return c;
}

function converge(config: any, wanted: SharedWanted) {
  const writes: string[] = [];
  for (let i = 0; i < 20; i++) {
    const w = nextSharedWrite(config, wanted, names);
    if (!w) return { config, writes };
    writes.push(`${w.method} ${w.path}`);
    config = applyWrite(config, w);
  }
  throw new Error('did not converge');
}

describe('nextSharedWrite', () => {
  it('names are the instance\'s only: svc does not own svc-2\'s servers', () => {
    expect(names.owns('svc-port-8080')).toBe(true);
    expect(names.owns('svc-domains')).toBe(true);
    expect(names.owns('svc-2-port-8080')).toBe(false);
    expect(names.owns('svc-2-domains')).toBe(false);
    expect(names.owns('operator')).toBe(false);
  });

  it('creates the shallowest missing parent once, then nothing', () => {
    const wanted = wantedFor([port('web', 8080)]);
    expect(converge(null, wanted).writes).toEqual(['POST /config/']);
    expect(converge({ admin: { listen: 'x' } }, wanted).writes).toEqual(['POST /config/apps']);
    expect(converge({ apps: { http: { http_port: 81 } } }, wanted).writes).toEqual(['POST /config/apps/http/servers']);
  });

  it("adds, replaces and removes only its own servers, leaving the operator's and another instance's", () => {
    const start = { admin: { listen: 'x' }, apps: { http: { http_port: 81, servers: { operator, 'svc-2-port-9000': operator, 'svc-port-7000': operator } } } };
    const { config, writes } = converge(start, wantedFor([port('web', 8080)]));
    expect(writes).toEqual(['POST /config/apps/http/servers/svc-port-8080', 'DELETE /config/apps/http/servers/svc-port-7000']);
    expect(Object.keys(config.apps.http.servers).sort()).toEqual(['operator', 'svc-2-port-9000', 'svc-port-8080']);
    expect(config.apps.http.http_port).toBe(81);
    expect(converge(config, wantedFor([port('web', 8080)])).writes).toEqual([]);
  });

  it("puts its TLS policy first, replaces it by @id, and removes it when no domain is left", () => {
    const start = { apps: { http: { servers: { operator } }, tls: { automation: { policies: [{ issuers: [{ module: 'acme' }] }] } }, pki: {} } };
    const one = converge(start, wantedFor([domain('a', 'a.test')]));
    expect(one.writes).toEqual(['POST /config/apps/http/servers/svc-domains', 'PUT /config/apps/tls/automation/policies/0']);
    expect(one.config.apps.tls.automation.policies).toHaveLength(2);
    expect(one.config.apps.tls.automation.policies[0]).toMatchObject({ '@id': 'svc-tls', subjects: ['a.test'] });
    const two = converge(one.config, wantedFor([domain('a', 'a.test'), domain('b', 'b.test')]));
    expect(two.writes).toEqual(['POST /config/apps/http/servers/svc-domains', 'PATCH /id/svc-tls']);
    const three = converge(two.config, wantedFor([]));
    expect(three.writes).toEqual(['DELETE /config/apps/http/servers/svc-domains', 'DELETE /id/svc-tls']);
    expect(three.config).toEqual(start);
  });

  it('sets install_trust false for the internal CA only when the operator has no pki settings', () => {
    const { writes } = converge({ apps: { http: { servers: {} } } }, wantedFor([domain('a', 'a.test')]));
    expect(writes).toEqual(['POST /config/apps/http/servers/svc-domains', 'POST /config/apps/tls', 'POST /config/apps/pki']);
  });

  it('adds svc\'s TLS log beside the operator\'s logs, converges, and removes only its own', () => {
    const tlsLog = tlsLogConfig('/var/log/svc-tls.log');
    const start = { logging: { logs: { operator: { level: 'DEBUG' } } }, apps: { http: { servers: {} } } };
    const { config, writes } = converge(start, { ...wantedFor([port('web', 8080)]), tlsLog });
    expect(writes).toEqual(['POST /config/apps/http/servers/svc-port-8080', 'POST /config/logging/logs/svc_tls']);
    expect(config.logging.logs).toEqual({ operator: { level: 'DEBUG' }, svc_tls: tlsLog });
    expect(converge(config, wantedFor([port('web', 8080)])).writes).toEqual(['DELETE /config/logging/logs/svc_tls']);
    expect(converge({ apps: { http: { servers: {} } } }, { ...wantedFor([]), tlsLog }).writes).toEqual(['POST /config/logging']);
  });
});
