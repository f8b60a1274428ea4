// Services, backups and settings pages through the real hono app and store.
import { beforeEach, describe, expect, it } from 'vitest';
import { getBackup, listBackups, completeBackup } from '../../../src/store/backups.js';
import { listRestores, updateRestore } from '../../../src/store/backup-ops.js';
import { createProgress } from '../../../src/backup/progress.js';
import { getService, listServices } from '../../../src/store/services.js';
import { listApiTokens } from '../../../src/store/tokens.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient, roleText } from './form-client.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: 'whsec-do-not-show', SVC_PUBLIC_URL: 'https://svc.example.com' } });
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
});

describe('services pages', () => {
  it('creates a service, shows credentials only when asked, stops, starts, refuses deleting a linked one, deletes with data', async () => {
    const list = await b.get('/services');
    expect(list.html).toMatch(/<label for="f-name-name">Name<\/label>.*<input id="f-name-name"/);
    expect(list.html).toMatch(/<label for="f-type-type">Type<\/label><select id="f-type-type" name="type">/);
    const bad = await b.post('/services', { name: 'ui-db', type: 'oracle' });
    expect(bad.status).toBe(400);
    expect(roleText(bad.html, 'alert')).toMatch(/unknown service type &quot;oracle&quot;/);
    const made = await b.post('/services', { name: 'ui-db', type: 'postgres' });
    const svc = listServices(t.db)[0];
    expect(made.location).toBe(`/services/${svc.id}?m=service_created`);
    const page = await b.follow(made);
    expect(roleText(page.html, 'status')).toMatch(/being provisioned/);
    for (const label of ['Stop', 'Start', 'Show credentials', 'Delete service']) expect(page.html).toContain(`>${label}</button>`);
    expect(page.html).toContain(`action="/services/${svc.id}/delete"`);
    const creds = (await t.request('GET', `/api/services/${svc.id}/credentials`)).body;
    expect(page.html).not.toContain(creds.password);
    const shown = await b.post(`/services/${svc.id}/credentials`);
    expect(shown.html).toContain(creds.password);
    expect(shown.headers.get('cache-control')).toBe('no-store');

    expect((await b.post(`/services/${svc.id}/stop`)).location).toBe(`/services/${svc.id}?m=service_stopping`);
    expect(getService(t.db, svc.id)!.desiredRunning).toBe(false);
    await b.post(`/services/${svc.id}/start`);
    expect(getService(t.db, svc.id)!.desiredRunning).toBe(true);

    const app = (await t.request('POST', '/api/apps', { name: 'ui-web', fallback_port: 18100 })).body;
    await t.request('POST', `/api/apps/${app.id}/services`, { service_id: svc.id });
    const asked = await b.get(`/services/${svc.id}/delete`);
    expect(asked.html).toContain('Also delete data');
    expect(asked.html).toContain('cannot be undone');
    expect(asked.html).toContain('unlink it from those apps first');
    const refused = await b.post(`/services/${svc.id}/delete`, { purge: 'on', confirm: 'yes' });
    expect(refused.status).toBe(409);
    expect(roleText(refused.html, 'alert')).toMatch(/linked to ui-web; unlink it from those apps first/);
    await t.request('DELETE', `/api/apps/${app.id}/services/${svc.id}`);
    // A post that did not come from the confirmation page deletes nothing: it asks.
    const unconfirmed = await b.post(`/services/${svc.id}/delete`, { purge: 'on' });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.html).toContain('>Delete service</button>');
    expect(getService(t.db, svc.id)).toBeDefined();
    const gone = await b.post(`/services/${svc.id}/delete`, { purge: 'on', confirm: 'yes' });
    expect(gone.location).toBe('/services?m=service_deleted');
    expect(getService(t.db, svc.id)).toBeUndefined();
  });
});

describe('backups page', () => {
  it('creates a backup, links its download, asks before a restore, deletes; shows schedule and retention', async () => {
    const page = await b.get('/backups');
    expect(page.html).toContain('Schedule: off');
    expect(page.html).toContain('the newest 10 backups are kept');
    const made = await b.post('/backups');
    expect(made.location).toBe('/backups?m=backup_created');
    const [row] = listBackups(t.db);
    expect(row).toMatchObject({ status: 'running', trigger: 'manual' });
    expect(t.enqueue.keys.some((k) => k.startsWith('backup:'))).toBe(true);
    completeBackup(t.db, row.id, 2048);
    const after = await b.follow(made);
    expect(after.html).toContain(`href="/api/backups/${row.id}/download"`);
    expect(after.html).toContain('2.0 KiB');
    const confirm = await b.get(`/backups/${row.id}/restore`);
    expect(confirm.html).toContain('safety backup');
    expect(confirm.html).toContain('>Restore</button>');
    const del = await b.post(`/backups/${row.id}/delete`);
    expect(del.location).toBe('/backups?m=backup_deleted');
    expect(getBackup(t.db, row.id)).toBeUndefined();
  });

  it('records a restore through the command and shows its progress on /restores/{id} until it has settled', async () => {
    const ui = createTestApi({ backups: { progress: createProgress() } });
    const { cookie } = await ui.login();
    const c = formClient(ui.app);
    c.jar.set('session', cookie);
    await c.get('/backups');
    await c.post('/backups');
    const [row] = listBackups(ui.db);
    completeBackup(ui.db, row.id, 2048);
    await c.get(`/backups/${row.id}/restore`);
    const asked = await c.post(`/backups/${row.id}/restore`);
    expect(asked.status, asked.html).toBe(303);
    const op = listRestores(ui.db)[0];
    expect(op).toMatchObject({ backupId: row.id, phase: 'pending' });
    expect(asked.location).toBe(`/restores/${op.id}`);
    expect(ui.enqueue.keys).toContain(`restore:${op.id}`);
    const page = await c.follow(asked);
    expect(page.html).toContain('data-phase="pending"');
    expect(page.html).toContain('data-refresh="2"');
    updateRestore(ui.db, op.id, { phase: 'swapping' });
    expect((await c.get(`/restores/${op.id}`)).html).toContain('Replacing the database and the service data');
    updateRestore(ui.db, op.id, { phase: 'failed', code: 'restore_failed', error: 'restore failed and was rolled back: engine gone' });
    const failed = await c.get(`/restores/${op.id}`);
    expect(failed.html).toContain('restore failed and was rolled back: engine gone');
    expect(failed.html).not.toContain('data-refresh');
    // A second restore while one runs is refused on the list page.
    updateRestore(ui.db, op.id, { phase: 'unpacking' });
    await c.get(`/backups/${row.id}/restore`);
    const again = await c.post(`/backups/${row.id}/restore`);
    expect(again.status).toBe(409);
    expect(roleText(again.html, 'alert')).toMatch(/restore \d+ is running/);
  });
});

describe('settings page', () => {
  it('offers the manifest flow with a state, the manual values with this host, the secret masked until revealed', async () => {
    const p = await b.get('/settings');
    expect(p.html).toMatch(/<form method="post" action="https:\/\/github.com\/settings\/apps\/new\?state=[A-Za-z0-9_-]+"><input type="hidden" name="manifest"/);
    expect(p.html).toContain('>Create GitHub App</button>');
    expect(p.html).toContain('https://svc.example.com/api/webhooks/codehost');
    expect(p.html).toContain('https://svc.example.com/api/codehost/setup-callback');
    expect(p.html).toContain('hook_attributes');
    expect(p.html).not.toContain('whsec-do-not-show');
    const revealed = await b.post('/settings/webhook-secret');
    expect(revealed.html).toContain('whsec-do-not-show');
    expect(roleText((await b.get('/settings?codehost=created')).html, 'status')).toMatch(/GitHub App created/);
    expect(roleText((await b.get('/settings?codehost_error=bad%20code')).html, 'alert')).toBe('Code-host setup failed: bad code');
    const json = await b.get('/settings/webhook-secret');
    expect(JSON.parse(json.html)).toEqual({ value: 'whsec-do-not-show' });
  });

  it('creates a token shown once that then authenticates the API, and deletes it', async () => {
    await b.get('/settings');
    const bad = await b.post('/settings/tokens', { name: '  ' });
    expect(bad.status).toBe(400);
    expect(roleText(bad.html, 'alert')).toBeTruthy();
    // Post, redirect, show once: the POST answers a redirect (a reload cannot re-POST), the GET shows it.
    const made = await b.post('/settings/tokens', { name: 'ci' });
    expect(made.status).toBe(303);
    expect(made.location).toMatch(/^\/settings\?token=[0-9a-f]{32}#h-tokens$/);
    expect(made.html ?? '').not.toMatch(/svc_/);
    const shown = await b.follow(made);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const token = /id="new-token">(svc_[A-Za-z0-9_-]+)</.exec(shown.html)?.[1];
    expect(token).toBeTruthy();
    expect((await t.request('GET', '/api/apps', undefined, { token, cookie: 'none' })).status).toBe(200);
    const reloaded = await b.follow(made);
    expect(reloaded.html).not.toContain(token!);
    expect(roleText(reloaded.html, 'status')).toContain('shown once');
    expect(listApiTokens(t.db, 1)).toHaveLength(1);
    const again = await b.get('/settings');
    expect(again.html).not.toContain(token!);
    // Names are unique per user: 409 with the reason, nothing created.
    const dup = await b.post('/settings/tokens', { name: 'ci' });
    expect(dup.status).toBe(409);
    expect(roleText(dup.html, 'alert')).toContain('a token named ci already exists');
    expect((await t.request('POST', '/api/tokens', { name: 'ci' })).status).toBe(409);
    expect(listApiTokens(t.db, 1)).toHaveLength(1);
    const [row] = listApiTokens(t.db, 1);
    expect((await b.post(`/settings/tokens/${row.id}/delete`)).location).toBe('/settings?m=token_deleted');
    expect((await t.request('GET', '/api/apps', undefined, { token, cookie: 'none' })).status).toBe(401);
  });
});
