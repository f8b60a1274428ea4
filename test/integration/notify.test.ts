// Notifications through a whole daemon process and a loopback receiver: a real failed deploy becomes a
// signed Standard Webhooks message, the test action shows the provider's real answer, and a daemon killed
// (SIGKILL) with messages waiting in the outbox sends every one of them after its restart, none twice. A
// crash loop ended by a good deploy closes its alert (issue 35 defect 5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { startHttpReceiver, type HttpReceiver } from '../support/notify-receivers.js';
import { freePort } from '../support/caddy.js';
import { waitFor } from '../support/wait.js';
import { WEB_CRASH, WEB_EXITS_LATER, WEB_V1 } from '../support/images.js';

let d: DaemonProcess;
let rx: HttpReceiver;

beforeAll(async () => {
  rx = await startHttpReceiver();
  d = await startDaemonProcess('notify', { SVC_PUBLIC_URL: 'https://svc.example.com' });
}, 60_000);
afterAll(async () => {
  await d?.close();
  await rx?.close();
});

/** An image that exits at once: its deploy ends `auto_rollback` at the health check (a real failure). */
async function failingDeploy(name: string): Promise<number> {
  const app = await d.api('POST', '/api/apps', { name, fallback_port: await freePort(), internal_port: 3000 });
  expect(app.status).toBe(201);
  const dep = await d.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_CRASH });
  expect(dep.status).toBe(202);
  return dep.body.id;
}

describe('notifications (daemon process)', () => {
  it('a failed deploy reaches the webhook signed, the test action shows the real answer, a killed daemon loses and repeats nothing', async () => {
    rx.answer = () => 503; // the receiver is down at first
    const created = await d.api('POST', '/api/notifications/channels', { name: 'ops', type: 'webhook', events: ['deploy_failed', 'deploy_auto_rollback'], config: { url: `${rx.url}/hook` } });
    expect(created.status).toBe(201);
    const { id, secret } = created.body;
    expect((await d.api('GET', '/api/notifications/channels')).body).toEqual([expect.not.objectContaining({ secret: expect.anything() })]);

    const test = await d.api('POST', `/api/notifications/channels/${id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ ok: false, status: 503, answer: 'HTTP 503 Service Unavailable: receiver says no' });

    const deploys = [await failingDeploy('alpha'), await failingDeploy('beta'), await failingDeploy('gamma')];
    // Each message tried once and refused: pending in the outbox, retry due 5 s later.
    await waitFor(async () => (await d.api('GET', '/api/notifications/deliveries')).body.filter((x: any) => x.event === 'deploy_auto_rollback').length === 3, { timeoutMs: 30_000, what: 'three refused attempts' });
    await d.kill();
    rx.answer = () => 200;
    const before = rx.requests.length;
    await d.start();
    await waitFor(async () => {
      const out = (await d.api('GET', '/api/notifications/outbox')).body as any[];
      return out.length === 3 && out.every((m) => m.status === 'delivered');
    }, { timeoutMs: 30_000, what: 'all delivered after the restart' });

    const accepted = rx.requests.slice(before).filter((r) => r.status === 200);
    const ids = accepted.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(3);
    expect(ids).toHaveLength(3); // none twice
    const payloads = accepted.map((r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { subject: string; url: string; message: string } });
    const subjects = payloads.map((p) => p.data.subject).sort();
    expect(subjects).toEqual(deploys.map((dep, i) => `${['alpha', 'beta', 'gamma'][i]}: deploy ${dep} rolled back (health_check)`));
    for (const p of payloads) {
      expect(p.type).toBe('deploy_auto_rollback');
      expect(p.data.url).toMatch(/^https:\/\/svc\.example\.com\/deploys\/\d+$/);
      expect(p.data.message).toContain('exited with code 1 before it became healthy');
    }
    const log = (await d.api('GET', '/api/notifications/deliveries')).body as any[];
    expect(log.filter((x) => x.event === 'deploy_auto_rollback').map((x) => x.status).sort()).toEqual([200, 200, 200, 503, 503, 503]);
  }, 90_000);

  it('a crash loop ended by a deploy of a good image: app_crashing, then app_recovered naming the new container', async () => {
    const ch = await d.api('POST', '/api/notifications/channels', { name: 'crash', type: 'slack', events: ['app_crashing', 'app_recovered'], config: { url: `${rx.url}/crash` } });
    expect(ch.status).toBe(201);
    const texts = () => rx.requests.filter((r) => r.path === '/crash' && r.status === 200).map((r) => JSON.parse(r.body).text as string);
    const app = await d.api('POST', '/api/apps', { name: 'loopy', fallback_port: await freePort(), internal_port: 3000 });
    expect(app.status).toBe(201);
    // Serves, passes its health check, then exits 1 s later, every time it is started: a crash loop.
    expect((await d.api('POST', `/api/apps/${app.body.id}/env`, { key: 'EXIT_AFTER', value: '1' })).status).toBe(201);
    const first = await d.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_EXITS_LATER });
    expect(first.status).toBe(202);
    await waitFor(() => texts().length === 1, { timeoutMs: 90_000, what: 'the crash alert' });
    expect(texts()[0]).toMatch(/^loopy keeps crashing\n/);

    const good = await d.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
    expect(good.status).toBe(202);
    await waitFor(() => texts().length === 2, { timeoutMs: 60_000, what: 'the recovery after the deploy' });
    const live = (await d.api('GET', `/api/apps/${app.body.id}`)).body;
    expect(live).toMatchObject({ status: 'active', current_deploy_id: good.body.id });
    expect(texts()[1]).toContain(`loopy recovered\nloopy serves again: its live container ${live.live_container_name} (deploy ${good.body.id}) has stayed up`);
    expect((await d.api('DELETE', `/api/apps/${app.body.id}`)).status).toBe(204);
  }, 150_000);
});
