// The app page explains itself (issue 18, sections 3 and 4): an empty variable says "empty" (a secret too,
// not the mask), the required ones that block a deploy are listed before anyone presses Deploy, Rollback
// is offered only when there is something to roll back to, "Link a service" lists only unlinked services.
import { beforeEach, describe, expect, it } from 'vitest';
import { listDeploys, updateDeploy } from '../../../src/store/deploys.js';
import { observeApp } from '../../../src/observed/apps.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient } from './form-client.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;
let id: number;

beforeEach(async () => {
  t = createTestApi();
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
  id = (await t.request('POST', '/api/apps', { name: 'web', image_ref: 'svc-test/web:v1', fallback_port: 18200 })).body.id;
});

/** A tab of the app page: '' the Overview, '/env' the Environment... */
const page = async (tab = '') => (await b.get(`/apps/${id}${tab}`)).html;
const valueCell = (html: string, key: string) => new RegExp(`id="env-value-${key}"[^>]*>([^<]*)<`).exec(html)?.[1];

describe('app page', () => {
  it('shows an empty variable, secret or not, as "empty", and lists the required ones that block a deploy', async () => {
    await t.request('POST', `/api/apps/${id}/env`, { key: 'API_KEY', value: '', is_secret: true, required: true });
    await t.request('POST', `/api/apps/${id}/env`, { key: 'NOTE', value: '', required: false });
    await t.request('POST', `/api/apps/${id}/env`, { key: 'SET', value: 's3cret', is_secret: true, required: true });
    const html = (await page()) + (await page('/env'));
    expect(valueCell(html, 'API_KEY')).toMatch(/^empty/);
    expect(valueCell(html, 'API_KEY')).toContain('blocks deploys');
    expect(valueCell(html, 'NOTE')).toBe('empty');
    expect(valueCell(html, 'SET')).toBe('••••••••');
    expect(html).toMatch(/id="deploy-blocked"[^>]*>A deploy is refused until these required variables have a value: <code>API_KEY<\/code>\./);
    expect(html).not.toContain('<code>SET</code>');
    expect((await t.request('GET', `/api/apps/${id}/env`)).body.map((v: { key: string; empty: boolean }) => [v.key, v.empty])).toEqual([
      ['API_KEY', true], ['NOTE', true], ['SET', false],
    ]);
    await t.request('POST', `/api/apps/${id}/env`, { key: 'API_KEY', value: 'now-set' });
    expect(await page()).not.toContain('id="deploy-blocked"');
  });

  it('offers Rollback only when there is an earlier successful deploy with another image', async () => {
    expect(await page()).not.toContain(`action="/apps/${id}/rollback"`);
    const deploy = async (image: string) => {
      await t.request('POST', `/api/apps/${id}/deploys`, { image_ref: image });
      const d = listDeploys(t.db, id)[0];
      updateDeploy(t.db, undefined, d.id, { status: 'success' });
      observeApp(t.db, id, { liveDeployId: d.id, liveImage: image, status: 'active' });
    };
    await deploy('svc-test/web:v1');
    expect(await page()).not.toContain(`action="/apps/${id}/rollback"`);
    await deploy('svc-test/web:v2');
    expect(await page()).toMatch(new RegExp(`action="/apps/${id}/rollback"[\\s\\S]*?Rollback<span class="sr"> to svc-test/web:v1`));
  });

  it('"Link a service" lists only services not linked yet', async () => {
    const a = (await t.request('POST', '/api/services', { name: 'db-a', type: 'postgres' })).body;
    await t.request('POST', '/api/services', { name: 'db-b', type: 'redis' });
    await t.request('POST', `/api/apps/${id}/services`, { service_id: a.id });
    const html = await page('/services');
    const select = /<select id="f-service_id-service" name="service_id">([\s\S]*?)<\/select>/.exec(html)![1];
    expect(select).toContain('db-b (redis)');
    expect(select).not.toContain('db-a');
  });
});

describe('the app form', () => {
  it('says what each build mode, app type and access mode means', async () => {
    const html = (await b.get('/apps/new')).html;
    expect(html).toContain('<option value="external_ci" selected="">external_ci: your CI builds and pushes the image; svc deploys it</option>');
    for (const text of ['svc_build: svc clones the repository', 'adopted_container: take over a running container', 'external_service: only route to an upstream URL']) {
      expect(html).toContain(text);
    }
  });
});
