// Issue 18 in the server-rendered pages: the status line beside the badge (dashboard and app page) with
// the route error, and the Deploy queued banner rendered as its outcome.
import { beforeEach, describe, expect, it } from 'vitest';
import { updateDeploy } from '../../../src/store/deploys.js';
import type { TestApi } from '../../support/api.js';
import { formClient, signedInForms, roleText } from './form-client.js';
import { observeApp } from '../../../src/observed/apps.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  ({ t, b } = await signedInForms());
});

const line = (html: string) => [...html.matchAll(/data-status-line[^>]*>([^<]*)</g)].map((m) => m[1]);

describe('status in the pages', () => {
  it('dashboard and app page: serving v1 · last deploy failed: reason · not routed: route error', async () => {
    const app = (await t.request('POST', '/api/apps', { name: 'ui-web', fallback_port: 18080, image_ref: 'svc-test/web:v1' })).body;
    observeApp(t.db, app.id, { status: 'error', serving: true, liveImage: 'svc-test/web:v1', statusReason: 'pull of web:v2 failed', routeError: 'port 18080 is already in use' });
    const expected = 'serving v1 · last deploy failed: pull of web:v2 failed · not routed: port 18080 is already in use';
    expect(line((await b.get('/')).html)).toEqual([expected]);
    expect(line((await b.get(`/apps/${app.id}`)).html)).toEqual([expected]);
  });

  it('the Deploy queued banner is rendered as the outcome once known', async () => {
    const app = (await t.request('POST', '/api/apps', { name: 'ui-web', fallback_port: 18080, image_ref: 'svc-test/web:v1' })).body;
    const dep = (await t.request('POST', `/api/apps/${app.id}/deploys`, {})).body;
    const url = `/apps/${app.id}?m=deploy_queued`;
    expect(roleText((await b.get(url)).html, 'status')).toBe(`Deploy #${dep.id} is queued. Its progress is shown below.`);
    updateDeploy(t.db, undefined, dep.id, { status: 'failed', error: 'pull of svc-test/web:v1 failed: not found' });
    const page = (await b.get(url)).html;
    expect(roleText(page, 'status')).toBe(`Deploy #${dep.id} failed: pull of svc-test/web:v1 failed: not found`);
    expect(page).toMatch(/id="flash" data-live="" class="notice error"|id="flash"[^>]*class="notice error"/);
  });
});
