// The app form's code host and access token (issue 20, code hosts beyond GitHub): the token is written
// through the API schema, never rendered back (not even after a refusal), kept by a blank field and removed
// by the checkbox.
import { beforeEach, describe, expect, it } from 'vitest';
import { getApp } from '../../../src/store/apps.js';
import type { TestApi } from '../../support/api.js';
import { formClient, signedInForms, roleText } from './form-client.js';

const TOKEN = 'glpat-ui-0123456789abcdef';
let t: TestApi;
let b: ReturnType<typeof formClient>;
beforeEach(async () => {
  ({ t, b } = await signedInForms());
});

describe('app form: code host and access token', () => {
  it('sets, never shows, keeps and removes the token', async () => {
    const form = await b.get('/apps/new');
    expect(form.html).toMatch(/<label( for="[^"]+")?>Code host/);
    expect(form.html).toMatch(/<label( for="[^"]+")?>Access token/);
    // A refused create does not echo the token back.
    const bad = await b.post('/apps/new', { name: 'Bad Name', access_mode: 'port', fallback_port: '18120', repo_token: TOKEN });
    expect(bad.status).toBe(400);
    expect(bad.html).not.toContain(TOKEN);

    const p = await b.post('/apps/new', { name: 'ui-priv', access_mode: 'port', fallback_port: '18121', build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/acme/priv.git', code_host: 'gitlab', repo_token: TOKEN });
    expect(p.status, roleText(p.html, 'alert')).toBe(303);
    const id = Number(/\/apps\/(\d+)/.exec(p.location!)![1]);
    expect(getApp(t.db, id)).toMatchObject({ codeHost: 'gitlab' });
    expect(t.sealer.open(getApp(t.db, id)!.repoTokenSealed!)).toBe(TOKEN);
    expect((await b.follow(p)).html).not.toContain(TOKEN);
    const page = await b.get(`/apps/${id}/settings`);
    expect(page.html).not.toContain(TOKEN);
    expect(page.html).toContain('set; blank keeps it');

    // Saving the settings with the token field blank keeps it; the checkbox removes it; blank host: derived.
    const base = { access_mode: 'port', fallback_port: '18121', build_mode: 'svc_build', repo_url: 'https://gitlab.example.com/acme/priv.git', code_host: '', repo_token: '' };
    expect((await b.post(`/apps/${id}/settings`, base)).location).toBe(`/apps/${id}/settings?m=app_saved`);
    expect(getApp(t.db, id)).toMatchObject({ codeHost: null, repoTokenSealed: expect.stringMatching(/^v1\./) });
    expect((await b.post(`/apps/${id}/settings`, { ...base, repo_token_remove: 'on' })).location).toBe(`/apps/${id}/settings?m=app_saved`);
    expect(getApp(t.db, id)!.repoTokenSealed).toBeNull();
  });
});
