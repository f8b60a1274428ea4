// A certificate that cannot be issued, with a real Caddy (the test daemon's, Debian's 2.6.2) and an ACME
// issuer that cannot succeed without leaving loopback: its directory is a local stub answering 503. Caddy
// writes the failure to the TLS log svc asked it for (SVC_PROXY_TLS_LOG in external mode); svc records it
// on the app and a webhook on loopback gets one `certificate_failed`. No traffic leaves the machine.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { startHttpReceiver, type HttpReceiver } from '../support/notify-receivers.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon;
let rx: HttpReceiver;
let acme: Server;
let upstream: Server;
let dir: string;
let acmeRequests = 0;

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as { port: number }).port;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-certs-'));
  rx = await startHttpReceiver();
  acme = createServer((_req, res) => {
    acmeRequests++;
    res.writeHead(503, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ type: 'urn:ietf:params:acme:error:serverInternal', detail: 'stub CA: no certificates here' }));
  });
  const acmePort = await listen(acme);
  upstream = createServer((_req, res) => res.end('upstream'));
  await listen(upstream);
  t = await startTestDaemon('certs', {
    SVC_TLS_ISSUER: 'acme',
    SVC_ACME_CA: `http://127.0.0.1:${acmePort}/directory`,
    SVC_PROXY_TLS_LOG: join(dir, 'tls.log'),
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await rx?.close();
  acme?.close();
  upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('certificate alerts', () => {
  it('a domain whose certificate cannot be issued shows on the app and alerts through the webhook', async () => {
    const ch = await t.api('POST', '/api/notifications/channels', { name: 'ops', type: 'webhook', events: ['certificate_failed'], config: { url: `${rx.url}/hook` } });
    expect(ch.status, JSON.stringify(ch.body)).toBe(201);
    const app = await t.api('POST', '/api/apps', {
      name: 'nocert', app_type: 'external_service', source: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
      access_mode: 'domain', domain: 'nocert.svc.test', internal_port: 3000, fallback_port: await freePort(),
    });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const shown = await waitFor(
      async () => {
        const a = (await t.api('GET', `/api/apps/${app.body.id}`)).body;
        return a.certificate_error ? a : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'certificate_error on the app' },
    );
    expect(acmeRequests, shown.certificate_error).toBeGreaterThan(0); // Caddy asked the loopback stub, nothing else
    expect(shown.certificate_error).toMatch(/503|stub CA/);
    const alerts = () => rx.requests.filter((r) => r.body.includes('certificate_failed'));
    await waitFor(() => alerts().length === 1 || undefined, { timeoutMs: 15_000, what: 'one webhook' });
    const payload = JSON.parse(alerts()[0].body);
    expect(payload.data.subject).toBe('nocert: no certificate for nocert.svc.test');

    // The storm rule (one message per domain while it keeps failing) is covered in test/unit/certs.
  }, 60_000);
});
