// The notification channels through the REST API and the settings page (the real hono app and store, a
// loopback receiver for the test action): secrets never come back, errors are API.md's, the log is shown.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApi, type TestApi } from '../../support/api.js';
import { startHttpReceiver, type HttpReceiver } from '../../support/notify-receivers.js';
import { formClient, roleText } from '../ui/form-client.js';
import { listChannels } from '../../../src/store/notify.js';

let t: TestApi;
let rx: HttpReceiver;
let cookie: string;
beforeEach(async () => {
  t = createTestApi({ env: { SVC_PUBLIC_URL: 'https://svc.example.com' } });
  cookie = (await t.login()).cookie;
  rx = await startHttpReceiver();
});
afterEach(() => rx.close());

describe('notifications API', () => {
  it('creates, lists, updates, tests and deletes a channel; the token in its URL never comes back', async () => {
    const url = `${rx.url}/services/T0/B0/SECRETTOKEN`;
    const made = await t.request('POST', '/api/notifications/channels', { name: 'chat', type: 'slack', events: ['deploy_failed', 'app_crashing'], config: { url } });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: made.body.id, name: 'chat', type: 'slack', events: ['deploy_failed', 'app_crashing'], enabled: true, target: `${rx.url}/…`, created_at: expect.any(String), updated_at: expect.any(String) });
    expect((await t.request('POST', '/api/notifications/channels', { name: 'chat', type: 'slack', config: { url } })).status).toBe(409);
    const list = await t.request('GET', '/api/notifications/channels');
    expect(JSON.stringify(list.body)).not.toContain('SECRETTOKEN');
    const bad = await t.request('POST', '/api/notifications/channels', { name: 'x', type: 'email', config: { host: 'h', from: 'nope', to: [] } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    expect(bad.body.details.issues.map((i: { path: string[] }) => i.path.join('.'))).toEqual(['config.from', 'config.to']);

    const test = await t.request('POST', `/api/notifications/channels/${made.body.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ ok: true, status: 200, answer: 'HTTP 200 OK: ok', message_id: expect.stringMatching(/^msg_/) });
    expect(JSON.parse(rx.requests[0].body).text).toContain('https://svc.example.com/settings');
    const log = await t.request('GET', `/api/notifications/deliveries?channel_id=${made.body.id}`);
    expect(log.body).toEqual([{ id: expect.any(Number), at: expect.any(String), channel_id: made.body.id, channel: 'chat', event: 'test', outbox_id: null, attempt: 1, ok: true, status: 200, answer: 'HTTP 200 OK: ok' }]);
    expect((await t.request('GET', '/api/notifications/deliveries?limit=0')).status).toBe(400);

    const upd = await t.request('PUT', `/api/notifications/channels/${made.body.id}`, { enabled: false, events: ['backup_failed'] });
    expect(upd.body).toMatchObject({ enabled: false, events: ['backup_failed'] });
    expect((await t.request('GET', '/api/notifications/events')).body).toContain('disk_full');
    expect((await t.request('DELETE', `/api/notifications/channels/${made.body.id}`)).status).toBe(204);
    expect((await t.request('GET', `/api/notifications/channels/${made.body.id}`)).status).toBe(404);
    expect((await t.request('GET', '/api/notifications/deliveries')).body).toEqual([]);
  });

  it('needs authentication', async () => {
    const anon = await t.app.request('/api/notifications/channels');
    expect(anon.status).toBe(401);
  });
});

describe('notifications page', () => {
  it('adds a webhook channel (secret shown once), tests it with the real answer, shows the log, deletes it', async () => {
    const b = formClient(t.app);
    b.jar.set('session', cookie);
    const empty = await b.get('/settings/notifications');
    expect(empty.html).toContain('No channels: nobody is told when something fails.');
    const bad = await b.post('/settings/notifications', { name: 'hook', type: 'webhook', url: 'not a url', event_deploy_failed: 'on' });
    expect(bad.status, bad.html.slice(0, 3000)).toBe(400);
    expect(roleText(bad.html, 'alert')).toMatch(/invalid webhook channel config: url/);
    rx.answer = () => 500;
    const made = await b.post('/settings/notifications', { name: 'hook', type: 'webhook', url: `${rx.url}/x?k=TOKENVALUE`, event_deploy_failed: 'on', event_app_crashing: 'on' });
    expect(made.status).toBe(200);
    expect(made.html).toMatch(/<code class="token">whsec_[A-Za-z0-9+/=]+<\/code>/);
    expect(made.headers.get('cache-control')).toBe('no-store');
    expect(listChannels(t.db)[0].events).toEqual(['deploy_failed', 'app_crashing']);
    expect(made.html).not.toContain('TOKENVALUE');
    const id = listChannels(t.db)[0].id;
    const tested = await b.post(`/settings/notifications/${id}/test`);
    expect(tested.html).toMatch(/role="status"><p>Test to <strong>hook<\/strong>: not delivered\. The provider answered: <code>HTTP 500 Internal Server Error: receiver says no<\/code>/);
    expect(rx.requests[0].headers['webhook-signature']).toMatch(/^v1,/);
    const page = await b.get('/settings/notifications');
    expect(page.html).toContain('HTTP 500 Internal Server Error');
    expect((await b.post(`/settings/notifications/${id}/delete`)).status).toBe(303);
    expect(listChannels(t.db)).toEqual([]);
  });
});

describe('svc notify', () => {
  it('adds, lists, tests (exit 1 when not delivered, with the answer), shows the log and removes', async () => {
    const { notifyCommand } = await import('../../../src/cli/notify.js');
    const { createClient } = await import('../../../src/cli/client.js');
    const token = (await t.request('POST', '/api/tokens', { name: 'cli' })).body.token as string;
    const client = createClient({ url: 'http://svc.test', token }, ((url: string, init: RequestInit) => t.app.request(url, init)) as typeof fetch);
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((s: string) => out.push(s) > 0) as unknown as typeof process.stdout.write;
    try {
      expect(await notifyCommand(client, { action: 'add', name: 'ops', type: 'discord', url: `${rx.url}/api/webhooks/1/TOKEN`, events: 'deploy_failed,backup_failed' })).toBe(0);
      expect(await notifyCommand(client, { action: 'list' })).toBe(0);
      rx.answer = () => 429;
      expect(await notifyCommand(client, { action: 'test', name: 'ops' })).toBe(1);
      expect(await notifyCommand(client, { action: 'log' })).toBe(0);
      expect(await notifyCommand(client, { action: 'rm', name: 'ops' })).toBe(0);
      await expect(notifyCommand(client, { action: 'test', name: 'ops' })).rejects.toThrow('no notification channel named ops');
    } finally {
      process.stdout.write = write;
    }
    const text = out.join('');
    expect(text).toContain(`channel ops added (${rx.url}/…)`);
    expect(text).toMatch(/ops\s+discord\s+http:\/\/127\.0\.0\.1:\d+\/…\s+yes\s+deploy_failed,backup_failed/);
    expect(text).toContain('not delivered: HTTP 429 Too Many Requests: receiver says no');
    expect(text).not.toContain('TOKEN');
  });
});
