import { describe, expect, it } from 'vitest';
import { adminListen, buildCaddyConfig, canonicalJson, partitionRoutes, reverseProxyHandler } from '../../../src/proxy/config.js';
import type { Route } from '../../../src/proxy/proxy.js';

const opts = { adminUrl: 'http://127.0.0.1:2019', httpPort: 80, httpsPort: 443, tlsIssuer: 'acme' as const, dnsPort: 5353 };
const dns = (app: string, port = 3000) => ({ kind: 'dns' as const, name: `${app}.svc.internal.`, port });
const portRoute = (app: string, port: number): Route => ({ app, mode: 'port', port, upstream: dns(app) });
const domainRoute = (app: string, domain: string): Route => ({ app, mode: 'domain', domain, upstream: dns(app) });

type AnyJson = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('buildCaddyConfig', () => {
  it('tags the http app with a fingerprint of the config: same routes same id, other routes another', () => {
    const id = (routes: Route[]) => (buildCaddyConfig(routes, opts) as AnyJson).apps.http['@id'];
    expect(id([portRoute('web', 8080)])).toMatch(/^svc-[0-9a-f]{16}$/);
    expect(id([portRoute('web', 8080)])).toBe(id([portRoute('web', 8080)]));
    expect(id([portRoute('web', 8081)])).not.toBe(id([portRoute('web', 8080)]));
    expect(id([])).not.toBe(id([portRoute('web', 8080)]));
  });

  it('keeps the admin listener in every config, even with no routes', () => {
    const c = buildCaddyConfig([], opts) as AnyJson;
    expect(c.admin).toEqual({ listen: '127.0.0.1:2019' });
    expect(c.apps.http.servers).toEqual({});
    expect(c.apps.tls).toBeUndefined();
  });

  it.each([
    ['http://127.0.0.1:2019', '127.0.0.1:2019'],
    ['http://localhost:9999/', 'localhost:9999'],
    ['http://10.1.2.3', '10.1.2.3:80'],
  ])('admin listen of %s is %s', (url, listen) => expect(adminListen(url)).toBe(listen));

  it('port mode: one server per app on :port, automatic HTTPS off, dynamic upstream through the responder', () => {
    const c = buildCaddyConfig([portRoute('web', 8080)], opts) as AnyJson;
    expect(Object.keys(c.apps.http.servers)).toEqual(['port-8080']);
    const s = c.apps.http.servers['port-8080'];
    expect(s.listen).toEqual([':8080']);
    expect(s.automatic_https).toEqual({ disable: true });
    expect(s.routes).toEqual([
      {
        handle: [
          {
            handler: 'reverse_proxy',
            dynamic_upstreams: {
              source: 'a',
              name: 'web.svc.internal.',
              port: '3000',
              refresh: '25ms',
              resolver: { addresses: ['udp/127.0.0.1:5353'] },
              dial_timeout: '1s',
            },
            load_balancing: { selection_policy: { policy: 'round_robin' }, try_duration: '5s', try_interval: '100ms' },
            health_checks: { passive: { fail_duration: '2s', max_fails: 1 } },
            transport: { protocol: 'http' },
          },
        ],
        terminal: true,
      },
    ]);
  });

  it('a Caddy that resends bodies (>= 2.11.2) gets a 500 ms dial timeout; 2.6.2 and an unknown Caddy keep the default 3 s; passive health on both', () => {
    const handler = (features?: { resendsBodies: boolean }) =>
      (buildCaddyConfig([portRoute('web', 8080)], { ...opts, features: features && { ...features, streamCloseDelay: false, requestBuffers: false } }) as AnyJson).apps.http.servers['port-8080'].routes[0].handle[0];
    expect(handler({ resendsBodies: true }).transport).toEqual({ protocol: 'http', dial_timeout: '500ms' });
    expect(handler({ resendsBodies: true }).health_checks).toEqual({ passive: { fail_duration: '2s', max_fails: 1 } });
    expect(handler({ resendsBodies: false }).transport).toEqual({ protocol: 'http' });
    expect(handler({ resendsBodies: false }).health_checks).toEqual({ passive: { fail_duration: '2s', max_fails: 1 } });
    expect(handler().transport).toEqual({ protocol: 'http' });
    // Another Caddy, another config: its fingerprint differs, so a replaced Caddy is loaded again.
    expect(handler({ resendsBodies: true })).not.toEqual(handler({ resendsBodies: false }));
  });

  it("a Caddy >= 2.7 keeps each app's streams across a config load for its drain_seconds; 2.6.2 and an unknown Caddy get no such field (they refuse it)", () => {
    const routes = [{ ...portRoute('web', 8080), drainSeconds: 45 }, { ...domainRoute('site', 'site.example.com'), drainSeconds: 3600 }, portRoute('plain', 8081)];
    const handlers = (streamCloseDelay?: boolean) => {
      const c = buildCaddyConfig(routes, { ...opts, features: streamCloseDelay === undefined ? undefined : { resendsBodies: true, streamCloseDelay, requestBuffers: true } }) as AnyJson;
      return [c.apps.http.servers['port-8080'].routes[0].handle[0], c.apps.http.servers.domains.routes[0].handle[0], c.apps.http.servers['port-8081'].routes[0].handle[0]];
    };
    expect(handlers(true).map((h) => h.stream_close_delay)).toEqual(['45s', '3600s', undefined]);
    expect(handlers(false).map((h) => h.stream_close_delay)).toEqual([undefined, undefined, undefined]);
    expect(handlers().map((h) => h.stream_close_delay)).toEqual([undefined, undefined, undefined]);
  });

  it('a Caddy >= 2.7 reads request bodies up to 64 KiB before dialling the app; 2.6.2 and an unknown Caddy get no such field (they refuse it)', () => {
    const handler = (requestBuffers?: boolean) =>
      (buildCaddyConfig([portRoute('web', 8080)], { ...opts, features: requestBuffers === undefined ? undefined : { resendsBodies: true, streamCloseDelay: true, requestBuffers } }) as AnyJson).apps.http.servers['port-8080'].routes[0].handle[0];
    expect(handler(true).request_buffers).toBe(65536);
    expect(handler(false).request_buffers).toBeUndefined();
    expect(handler().request_buffers).toBeUndefined();
  });

  it('domain mode: one server on :httpsPort with host matchers and an ACME policy with the email', () => {
    const c = buildCaddyConfig([domainRoute('b', 'B.example.com'), domainRoute('a', 'a.example.com')], { ...opts, acmeEmail: 'ops@example.com' }) as AnyJson;
    const s = c.apps.http.servers.domains;
    expect(s.listen).toEqual([':443']);
    expect(s.automatic_https).toBeUndefined(); // redirects stay on
    expect(s.routes.map((r: AnyJson) => r.match[0].host[0])).toEqual(['a.example.com', 'b.example.com']);
    expect(c.apps.http.http_port).toBe(80);
    expect(c.apps.http.https_port).toBe(443);
    expect(c.apps.tls.automation.policies).toEqual([
      { subjects: ['a.example.com', 'b.example.com'], issuers: [{ module: 'acme', email: 'ops@example.com' }], on_demand: false },
    ]);
    expect(c.apps.pki).toBeUndefined();
  });

  it.each([
    ['acme', undefined, { module: 'acme' }],
    ['internal', 'x@example.com', { module: 'internal' }],
  ] as const)('issuer %s (email %s)', (tlsIssuer, acmeEmail, issuer) => {
    const c = buildCaddyConfig([domainRoute('a', 'a.test')], { ...opts, tlsIssuer, acmeEmail }) as AnyJson;
    expect(c.apps.tls.automation.policies[0].issuers).toEqual([issuer]);
    if (tlsIssuer === 'internal') expect(c.apps.pki.certificate_authorities.local.install_trust).toBe(false);
  });

  it('the same routes in any order give byte-identical JSON', () => {
    const routes = [portRoute('z', 9001), domainRoute('a', 'a.test'), portRoute('m', 9000), domainRoute('c', 'c.test')];
    const one = JSON.stringify(buildCaddyConfig(routes, opts));
    const two = JSON.stringify(buildCaddyConfig([...routes].reverse(), opts));
    expect(one).toBe(two);
    expect(one).toBe(canonicalJson(JSON.parse(one)));
  });

  it('adds file storage only when asked', () => {
    expect((buildCaddyConfig([], opts) as AnyJson).storage).toBeUndefined();
    expect((buildCaddyConfig([], { ...opts, storageDir: '/d' }) as AnyJson).storage).toEqual({ module: 'file_system', root: '/d' });
  });
});

describe('reverseProxyHandler for url upstreams', () => {
  it.each([
    ['http://api.example.com', { dial: 'api.example.com:80' }, 'api.example.com', undefined],
    ['http://10.0.0.5:8080/ignored', { dial: '10.0.0.5:8080' }, '10.0.0.5:8080', undefined],
    ['https://api.example.com', { dial: 'api.example.com:443' }, 'api.example.com', { protocol: 'http', tls: { server_name: 'api.example.com' } }],
    ['https://1.2.3.4:8443', { dial: '1.2.3.4:8443' }, '1.2.3.4:8443', { protocol: 'http', tls: {} }],
    ['http://[::1]:81', { dial: '[::1]:81' }, '[::1]:81', undefined],
  ])('%s', (url, upstream, host, transport) => {
    const h = reverseProxyHandler({ kind: 'url', url }, 5353) as AnyJson;
    expect(h.upstreams).toEqual([upstream]);
    expect(h.headers.request.set.Host).toEqual([host]);
    expect(h.transport).toEqual(transport);
  });

  it('adds a trailing dot to a dns name without one', () => {
    expect((reverseProxyHandler({ kind: 'dns', name: 'web.svc.internal', port: 80 }, 53) as AnyJson).dynamic_upstreams.name).toBe('web.svc.internal.');
  });
});

describe('partitionRoutes', () => {
  it.each<[string, Route[], string[], string[]]>([
    ['duplicate port: first app by name wins', [portRoute('b', 9000), portRoute('a', 9000)], ['a'], ['b']],
    ['port equal to SVC_HTTP_PORT', [portRoute('a', 80)], [], ['a']],
    ['port equal to the admin port', [portRoute('a', 2019)], [], ['a']],
    ['duplicate domain, case-insensitive', [domainRoute('a', 'x.test'), domainRoute('b', 'X.TEST')], ['a'], ['b']],
    ['port route without a port', [{ app: 'a', mode: 'port', upstream: dns('a') }], [], ['a']],
    ['no conflict', [portRoute('a', 9000), domainRoute('b', 'b.test')], ['a', 'b'], []],
  ])('%s', (_name, routes, kept, dropped) => {
    const { routes: ok, conflicts } = partitionRoutes(routes, opts);
    expect(ok.map((r) => r.app)).toEqual(kept);
    expect(conflicts.map((c) => c.app)).toEqual(dropped);
  });
});

describe('a route with no container', () => {
  it('answers a 503 page from Caddy itself, no upstream to wait for', () => {
    const config = buildCaddyConfig([{ app: 'web', mode: 'port', port: 8080, upstream: { kind: 'none' } }], {
      adminUrl: 'http://127.0.0.1:2019',
      httpPort: 80,
      httpsPort: 443,
      tlsIssuer: 'internal',
      dnsPort: 5353,
    }) as AnyJson;
    const [handler] = config.apps.http.servers['port-8080'].routes[0].handle;
    expect(handler).toMatchObject({ handler: 'static_response', status_code: 503, headers: { 'Content-Type': ['text/html; charset=utf-8'] } });
    expect(handler.body).toContain('no running container');
  });
});
