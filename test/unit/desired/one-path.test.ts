// One write path (DESIGN.md rule 12): the REST API, the UI's forms and manifest applies call the same
// command, so the same input gets the same refusal (status and sentence) whichever way it comes, and every
// deploy records the entry point that asked for it (`origin`).
import { beforeEach, describe, expect, it } from 'vitest';
import type { TestApi } from '../../support/api.js';
import { formClient, signedInForms, roleText } from '../ui/form-client.js';
import { listDeploys } from '../../../src/store/deploys.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  ({ t, b } = await signedInForms());
});

const FORM = { image_ref: 'svc-test/web:v1', internal_port: '3000', access_mode: 'port', build_mode: 'external_ci', branch: 'main', health_check_path: '/', app_type: 'managed' };

async function uiCreate(name: string, fallbackPort: number) {
  await b.get('/apps/new');
  return b.post('/apps/new', { ...FORM, name, fallback_port: String(fallbackPort) });
}

const manifest = (name: string, port: number) =>
  t.request('POST', '/api/manifests/apply', undefined, {
    raw: `apiVersion: svc/v1\nkind: App\nmetadata: {name: ${name}}\nspec: {fallback_port: ${port}}\n`,
    contentType: 'application/yaml',
    headers: { origin: 'http://localhost' },
  });

describe('REST, UI and manifests share the apps command', () => {
  it('a taken fallback port is the same 409 with the same sentence from REST and from the UI form', async () => {
    expect((await t.request('POST', '/api/apps', { name: 'first', fallback_port: 18081 })).status).toBe(201);
    const rest = await t.request('POST', '/api/apps', { name: 'second', fallback_port: 18081 });
    const ui = await uiCreate('second', 18081);
    expect(rest.status).toBe(409);
    expect(rest.body).toMatchObject({ code: 'conflict', details: { field: 'fallback_port' } });
    expect(ui.status).toBe(409);
    expect(roleText(ui.html, 'alert')).toContain(rest.body.error);
    // The manifest's plan names the same holder; nothing is written by any of the three.
    const applied = await manifest('second', 18081);
    expect(applied.body.errors).toEqual([expect.objectContaining({ path: 'spec.fallback_port', message: expect.stringMatching(/18081 is already used/) })]);
    expect((await t.request('GET', '/api/apps')).body.map((a: { name: string }) => a.name)).toEqual(['first']);
  });

  it('the ports svc listens on are refused from REST, the UI and a manifest alike, with nothing passed by the caller', async () => {
    for (const port of [t.config.port, t.config.proxy.httpPort, t.config.proxy.httpsPort, t.config.proxy.dnsPort]) {
      const rest = await t.request('POST', '/api/apps', { name: `r${port}`, fallback_port: port });
      expect(rest.status, `REST ${port}`).toBe(400);
      expect(rest.body.error).toBe(`fallback_port: port ${port} is used by svc itself`);
      const ui = await uiCreate(`u${port}`, port);
      expect(ui.status, `UI ${port}`).toBe(400);
      // The same refusal, said under the form's label for the field (issue 18).
      expect(roleText(ui.html, 'alert')).toBe(`Port: port ${port} is used by svc itself`);
      const applied = await manifest(`m${port}`, port);
      expect(applied.body.errors, `manifest ${port}`).toEqual([expect.objectContaining({ path: 'spec.fallback_port', message: `port ${port} is used by svc itself` })]);
    }
    expect((await t.request('GET', '/api/apps')).body).toEqual([]);
  });

  it('the UI settings form refuses an immutable-name change or a bad field as the REST PUT does', async () => {
    const created = await t.request('POST', '/api/apps', { name: 'web', fallback_port: 18082 });
    const rest = await t.request('PUT', `/api/apps/${created.body.id}`, { access_mode: 'domain' });
    expect(rest.status).toBe(400);
    await b.get(`/apps/${created.body.id}`);
    const ui = await b.post(`/apps/${created.body.id}/settings`, { ...FORM, fallback_port: '18082', access_mode: 'domain', domain: '' });
    expect(ui.status).toBe(400);
    expect(rest.body.error).toBe('domain: required when access_mode is domain');
    expect(roleText(ui.html, 'alert')).toBe('Domain is required when access_mode is domain');
  });
});

describe('deploys record their origin', () => {
  it('api by default, cli when the CLI says so (and only cli), ui from the form, manifest from an apply', async () => {
    const app = (await t.request('POST', '/api/apps', { name: 'web', image_ref: 'img:1', fallback_port: 18083 })).body;
    const rest = await t.request('POST', `/api/apps/${app.id}/deploys`, {});
    expect(rest.body).toMatchObject({ trigger: 'manual', origin: 'api' });
    const cli = await t.request('POST', `/api/apps/${app.id}/deploys`, {}, { headers: { 'x-svc-origin': 'cli' } });
    expect(cli.body).toMatchObject({ trigger: 'manual', origin: 'cli' });
    // A client cannot pass itself off as another entry point.
    const spoof = await t.request('POST', `/api/apps/${app.id}/deploys`, {}, { headers: { 'x-svc-origin': 'webhook' } });
    expect(spoof.body).toMatchObject({ origin: 'api' });

    await b.get(`/apps/${app.id}`);
    const ui = await b.post(`/apps/${app.id}/deploy`, { image_ref: 'img:2' });
    expect(ui.status, roleText(ui.html, 'alert')).toBe(303);
    expect(listDeploys(t.db, app.id)[0]).toMatchObject({ imageRef: 'img:2', trigger: 'manual', origin: 'ui' });
    expect((await t.request('GET', `/api/deploys/${listDeploys(t.db, app.id)[0].id}`)).body.origin).toBe('ui');
    expect((await t.request('GET', `/api/apps/${app.id}`)).body.deploys[0].origin).toBe('ui');

    await manifest('mf', 18084).then((r) => expect(r.body.errors).toEqual([]));
    const applied = await t.request('POST', '/api/manifests/apply', undefined, {
      raw: 'apiVersion: svc/v1\nkind: App\nmetadata: {name: mf}\nspec: {fallback_port: 18084, image_ref: "img:9"}\n',
      contentType: 'application/yaml',
      headers: { origin: 'http://localhost' },
    });
    expect(applied.body.errors).toEqual([]);
    const mf = (await t.request('GET', '/api/apps')).body.find((a: { name: string }) => a.name === 'mf');
    expect(listDeploys(t.db, mf.id)[0]).toMatchObject({ imageRef: 'img:9', trigger: 'manual', origin: 'manifest' });
  });
});
