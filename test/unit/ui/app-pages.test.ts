// The app pages through the real hono app and store: forms write through the API's functions and schemas,
// refusals are shown in role="alert", secrets stay masked until revealed, confirmations in role="status".
import { beforeEach, describe, expect, it } from 'vitest';
import { addDeployEvent, listDeploys, updateDeploy } from '../../../src/store/deploys.js';
import { getApp } from '../../../src/store/apps.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { formClient, signedInForms, roleText } from './form-client.js';
import { observeApp } from '../../../src/observed/apps.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  ({ t, b } = await signedInForms());
});

async function newApp(fields: Record<string, string> = {}) {
  await b.get('/apps/new');
  const p = await b.post('/apps/new', { name: 'ui-web', image_ref: 'svc-test/web:v1', internal_port: '3000', access_mode: 'port', fallback_port: '18081', build_mode: 'external_ci', branch: 'main', health_check_path: '/', app_type: 'managed', ...fields });
  expect(p.status, roleText(p.html, 'alert')).toBe(303);
  return { id: Number(/\/apps\/(\d+)/.exec(p.location!)![1]), page: await b.follow(p) };
}

describe('app pages', () => {
  it('/apps/new has every contract label and creates the app through the API schema', async () => {
    const form = await b.get('/apps/new');
    for (const label of ['Name', 'Image', 'Internal port', 'Access mode', 'Domain', 'Port', 'Build mode', 'Repository', 'Branch', 'Health check path']) {
      expect(form.html, label).toMatch(new RegExp(`<label( for="[^"]+")?>${label}(</label>|<select)`));
    }
    expect(form.html).toContain('>Create app</button>');
    // What a first app needs comes first; the rest waits under "More options" (a native <details>).
    const more = form.html.indexOf('<details class="more"><summary>More options</summary>');
    expect(more).toBeGreaterThan(0);
    for (const label of ['>Name<', '>Image<', '>Internal port<', '>Access mode<', '>Port<', '>Repository<']) expect(form.html.indexOf(label), label).toBeLessThan(more);
    expect(form.html.indexOf('>Replicas<')).toBeGreaterThan(more);
    expect((await b.get('/apps/1/settings')).html).not.toContain('More options');
    const { id, page } = await newApp();
    expect(roleText(page.html, 'status')).toMatch(/App created/);
    const row = getApp(t.db, id)!;
    expect(row).toMatchObject({ name: 'ui-web', imageRef: 'svc-test/web:v1', fallbackPort: 18081, owner: 'rest' });
    expect(t.enqueue.keys).toContain('app:ui-web');
    expect(page.html).toContain('http://localhost:18081');
  });

  it('shows refusals of the shared validation in role="alert" and keeps what was typed', async () => {
    await b.get('/apps/new');
    const bad = await b.post('/apps/new', { name: 'Bad Name', access_mode: 'port', fallback_port: '18082' });
    expect(bad.status).toBe(400);
    expect(roleText(bad.html, 'alert')).toMatch(/^Name must start with a lowercase letter/);
    expect(bad.html).toContain('value="Bad Name"');
    await newApp();
    await b.get('/apps/new');
    const dup = await b.post('/apps/new', { name: 'ui-web', access_mode: 'port', fallback_port: '18083' });
    expect(dup.status).toBe(409);
    expect(roleText(dup.html, 'alert')).toBe('an app named ui-web already exists');
    const noPort = await b.post('/apps/new', { name: 'ui-two', access_mode: 'port', fallback_port: 'abc' });
    expect(noPort.status).toBe(400);
    // Said with the field's label and the rule in words, not zod's `fallback_port: Invalid input: expected number`.
    expect(roleText(noPort.html, 'alert')).toBe('Port must be a whole number between 1 and 65535');
    const zero = await b.post('/apps/new', { name: 'ui-two', access_mode: 'port', fallback_port: '0' });
    expect(roleText(zero.html, 'alert')).toBe('Port must be between 1 and 65535');
    const replicas = await b.post('/apps/new', { name: 'ui-two', access_mode: 'port', fallback_port: '18084', replicas: '99' });
    expect(roleText(replicas.html, 'alert')).toBe('Replicas must be between 0 and 50');
  });

  it('Deploy and Rollback queue deploys like the API; the progress and history show them', async () => {
    const { id } = await newApp();
    const deployed = await b.post(`/apps/${id}/deploy`, { image_ref: '' });
    expect(deployed.location).toBe(`/apps/${id}?m=deploy_queued`);
    const [d] = listDeploys(t.db, id);
    expect(d).toMatchObject({ imageRef: 'svc-test/web:v1', trigger: 'manual', status: 'pending' });
    updateDeploy(t.db, undefined, d.id, { status: 'running' });
    const ev = addDeployEvent(t.db, undefined, d.id, 'start', 'deploying ui-web with svc-test/web:v1');
    const page = await b.follow(deployed);
    expect(page.html).toMatch(/role="log" aria-label="Deploy progress"/);
    expect(page.html).toContain(`data-deploy-stream="${d.id}" data-last-id="${ev.id}"`);
    expect(page.html).toContain('deploying ui-web with svc-test/web:v1');
    expect(page.html).toContain(`<a href="/deploys/${d.id}">#${d.id}</a>`);
    expect((await b.get(`/apps/${id}/logs`)).html).toMatch(/role="log" aria-label="Logs"/);
    // Rollback with nothing to roll back to: the API's 409 sentence, on the page.
    const rb = await b.post(`/apps/${id}/rollback`);
    expect(rb.status).toBe(409);
    expect(roleText(rb.html, 'alert')).toBe('no earlier successful deploy with a different image to roll back to');
    // A required variable without a value blocks a manual deploy with the API's 422.
    await b.post(`/apps/${id}/env`, { key: 'NEEDED', value: '', required: 'on' });
    const blocked = await b.post(`/apps/${id}/deploy`, { image_ref: 'svc-test/web:v2' });
    expect(blocked.status).toBe(422);
    expect(roleText(blocked.html, 'alert')).toMatch(/NEEDED/);
  });

  it('/apps/{id}/logs shows the live container\'s last lines without JavaScript, or says why there are none', async () => {
    const rt = new FakeRuntime({ images: ['svc-test/web:v1'] });
    t = createTestApi({ runtime: rt });
    const { cookie } = await t.login();
    b = formClient(t.app);
    b.jar.set('session', cookie);
    const { id } = await newApp();
    expect(roleText((await b.get(`/apps/${id}/logs`)).html, 'status')).toContain('No container of this app is live');
    await rt.run({ name: 'svc-ui-web-1', image: 'svc-test/web:v1', labels: {} });
    for (let i = 1; i <= 250; i++) rt.log('svc-ui-web-1', `line ${i} <b>`);
    observeApp(t.db, id, { liveContainerName: 'svc-ui-web-1' });
    const page = await b.get(`/apps/${id}/logs`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('line 250 &lt;b&gt;');
    expect(page.html).toContain('line 51 ');
    expect(page.html).not.toContain('line 50 ');
    // The page opens at its newest line: the links name the anchor after the last line, and the box does not scroll inside;
    // the script follows on from there (tail=0: these lines are on the page already).
    expect(page.html).toContain(`href="/apps/${id}/logs#newest"`);
    expect(page.html).toMatch(/line 250 &lt;b&gt;\n<span id="newest"><\/span><\/pre>/);
    expect(page.html).toContain('<pre class="logs whole"');
    expect(page.html).toContain(`data-logs="${id}" data-tail="0"`);
  });

  it('organises the app page by task: each tab its own URL, marked current, with only its own part', async () => {
    const { id } = await newApp();
    const parts: [string, string][] = [
      ['', 'Deploy progress'], ['/deploys', 'Deploy history'], ['/logs', 'aria-label="Logs"'], ['/env', 'Add or change a variable'],
      ['/services', 'Link a service'], ['/jobs', 'Scheduled jobs'], ['/metrics', 'Resources'], ['/previews', '<code>svc previews ui-web</code>'], ['/settings', 'Danger zone'],
    ];
    for (const [path, part] of parts) {
      const p = await b.get(`/apps/${id}${path}`);
      expect(p.status, path).toBe(200);
      expect(p.html, path).toContain(`<a href="/apps/${id}${path}" aria-current="page">`);
      expect(p.html.match(/aria-current="page"/g), path).toHaveLength(1);
      // The header on every tab: status and Deploy.
      expect(p.html, path).toContain('id="app-facts"');
      expect(p.html, path).toContain('>Deploy</button>');
      for (const [other, otherPart] of parts) if (other !== path && !(path === '' && other === '/deploys')) expect(p.html, `${path} has ${otherPart}`).not.toContain(otherPart);
    }
    // The settings form is on its tab, and the danger zone comes last.
    const settings = (await b.get(`/apps/${id}/settings`)).html;
    expect(settings.indexOf('Save changes')).toBeLessThan(settings.indexOf('Danger zone'));
    expect((await b.get('/apps/999/env')).status).toBe(404);
  });

  it('/deploys/{id} shows the fields and the region "Events"', async () => {
    const { id } = await newApp();
    await b.post(`/apps/${id}/deploy`, { image_ref: 'svc-test/web:v2' });
    const [d] = listDeploys(t.db, id);
    addDeployEvent(t.db, undefined, d.id, 'start', 'deploying ui-web with svc-test/web:v2');
    const p = await b.get(`/deploys/${d.id}`);
    expect(p.status).toBe(200);
    expect(p.html).toMatch(/role="log" aria-label="Events"/);
    expect(p.html).toContain('svc-test/web:v2');
    expect(p.html).toContain(`<a href="/apps/${id}">ui-web</a>`);
    expect((await b.get('/deploys/999')).status).toBe(404);
    expect((await b.get('/deploys/abc')).status).toBe(404);
  });

  it('env editor: a secret is masked, revealed on demand (no-script form), history per key, delete', async () => {
    const { id } = await newApp();
    const saved = await b.post(`/apps/${id}/env`, { key: 'API_KEY', value: 'hunter2-very-secret', is_secret: 'on' });
    expect(saved.location).toBe(`/apps/${id}/env?m=env_saved`);
    await b.post(`/apps/${id}/env`, { key: 'MODE', value: 'prod' });
    const page = await b.follow(saved);
    expect(page.html).not.toContain('hunter2-very-secret');
    expect(page.html).toContain('••••••••');
    expect(page.html).toContain('>prod<');
    expect(page.html).toContain(`data-reveal="/api/apps/${id}/env/API_KEY/reveal"`);
    const revealed = await b.post(`/apps/${id}/env/API_KEY/reveal`);
    expect(revealed.status).toBe(200);
    expect(revealed.headers.get('cache-control')).toBe('no-store');
    expect(revealed.html).toContain('hunter2-very-secret');
    const history = await b.get(`/apps/${id}/env/API_KEY/history`);
    expect(history.html).toContain('created');
    expect(history.html).toContain('secret, not kept');
    expect(history.html).not.toContain('hunter2-very-secret');
    const bad = await b.post(`/apps/${id}/env`, { key: '1BAD', value: 'x' });
    expect(bad.status).toBe(400);
    expect(roleText(bad.html, 'alert')).toBe('Key must start with a letter or _ and contain only letters, digits and _, at most 256 characters');
    const del = await b.post(`/apps/${id}/env/MODE/delete`);
    expect(del.location).toBe(`/apps/${id}/env?m=env_deleted`);
    expect((await b.follow(del)).html).not.toContain('>prod<');
  });

  it('links a service with an alias and unlinks it; settings save through the update schema; delete asks first', async () => {
    const { id } = await newApp();
    const svc = (await t.request('POST', '/api/services', { name: 'ui-db', type: 'postgres' })).body;
    const page = await b.get(`/apps/${id}/services`);
    expect(page.html).toMatch(/<label for="f-service_id-service">Service<\/label><select id="f-service_id-service" name="service_id">/);
    const linked = await b.post(`/apps/${id}/links`, { service_id: String(svc.id), alias: 'DB' });
    expect(linked.location).toBe(`/apps/${id}/services?m=linked`);
    const after = await b.follow(linked);
    expect(after.html).toContain('DB_HOST');
    expect(after.html).toMatch(/configuration changed since the live deploy|>Unlink/);
    const again = await b.post(`/apps/${id}/links`, { service_id: String(svc.id) });
    expect(again.status).toBe(409);
    expect((await b.post(`/apps/${id}/links/${svc.id}/delete`)).location).toBe(`/apps/${id}/services?m=unlinked`);

    const saved = await b.post(`/apps/${id}/settings`, { image_ref: 'svc-test/web:v2', internal_port: '3000', access_mode: 'port', fallback_port: '18090', build_mode: 'external_ci', branch: 'release', health_check_path: '/health', app_type: 'managed', domain: '', repo_url: '', source: '' });
    expect(saved.location).toBe(`/apps/${id}/settings?m=app_saved`);
    expect(getApp(t.db, id)).toMatchObject({ imageRef: 'svc-test/web:v2', fallbackPort: 18090, branch: 'release', healthCheckPath: '/health' });
    // Replicas and limits (issue 19): the form's three fields become `replicas` and `resources`.
    const scaled = await b.post(`/apps/${id}/settings`, { access_mode: 'port', fallback_port: '18090', replicas: '3', memory_mb: '256', cpus: '0.5' });
    expect(scaled.location).toBe(`/apps/${id}/settings?m=app_saved`);
    expect(getApp(t.db, id)).toMatchObject({ replicas: 3, memoryMb: 256, cpus: 0.5 });
    const scaledPage = (await b.follow(scaled)).html;
    expect(scaledPage).toMatch(/name="replicas"[^>]*value="3"/);
    expect((await b.get(`/apps/${id}`)).html).toContain('256 MiB, 0.5 CPU each');
    expect((await b.post(`/apps/${id}/settings`, { access_mode: 'port', fallback_port: '18090', replicas: '3', cpus: 'lots' })).status).toBe(400);
    expect((await b.post(`/apps/${id}/settings`, { access_mode: 'port', fallback_port: '18090', replicas: '51' })).status).toBe(400);
    expect(getApp(t.db, id)).toMatchObject({ replicas: 3, memoryMb: 256, cpus: 0.5 });
    expect(await b.post(`/apps/${id}/settings`, { access_mode: 'port', fallback_port: '18090', memory_mb: '', cpus: '' })).toMatchObject({ location: `/apps/${id}/settings?m=app_saved` });
    expect(getApp(t.db, id)).toMatchObject({ replicas: 3, memoryMb: null, cpus: null });
    const badSave = await b.post(`/apps/${id}/settings`, { access_mode: 'domain', domain: '' });
    expect(badSave.status).toBe(400);
    expect(getApp(t.db, id)!.accessMode).toBe('port');

    const confirm = await b.get(`/apps/${id}/delete`);
    expect(confirm.html).toContain('cannot be undone');
    expect(getApp(t.db, id)).toBeDefined();
    const gone = await b.post(`/apps/${id}/delete`);
    expect(gone.location).toBe('/?m=app_deleted');
    expect(getApp(t.db, id)).toBeUndefined();
    expect((await b.get(`/apps/${id}`)).status).toBe(404);
  });
});
