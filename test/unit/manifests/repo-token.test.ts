// `code_host` and `repo_token` in manifests (issue 20, code hosts beyond GitHub): the token is set, kept when
// the document does not name it, compared with the stored one (a change only when it differs) and removed
// with null; no answer ever carries it.
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { createTestApi, type TestApi } from '../../support/api.js';
import { apps } from '../../../src/store/schema/index.js';

let t: TestApi;
beforeEach(async () => {
  t = createTestApi();
  await t.login();
});
afterAll(() => rmSync(t.config.dataDir, { recursive: true, force: true }));

const TOKEN = 'glpat-manifest-0123456789';
const doc = (token?: string) => `apiVersion: svc/v1
kind: App
metadata: {name: mf-priv}
spec:
  build_mode: svc_build
  repo_url: https://gitlab.example.com/acme/priv.git
  code_host: gitlab
  fallback_port: 8081
${token === undefined ? '' : `  repo_token: ${token}\n`}`;
const apply = (text: string, query = '') => t.request('POST', `/api/manifests/apply${query}`, undefined, { raw: text, contentType: 'application/yaml', headers: { origin: 'http://localhost' } });
const row = () => t.db.select().from(apps).get()!;

describe('manifests: code_host and repo_token', () => {
  it('sets, keeps, compares and removes the token without ever answering it', async () => {
    const created = await apply(doc(TOKEN));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(JSON.stringify(created.body)).not.toContain(TOKEN);
    expect(row().codeHost).toBe('gitlab');
    expect(t.sealer.open(row().repoTokenSealed!)).toBe(TOKEN);

    const same = await apply(doc(TOKEN));
    expect(same.body.resources).toMatchObject([{ name: 'mf-priv', action: 'unchanged' }]);
    expect((await apply(doc())).body.resources).toMatchObject([{ action: 'unchanged' }]);
    expect(t.sealer.open(row().repoTokenSealed!)).toBe(TOKEN);

    const dry = await apply(doc('glpat-other-token'), '?dry_run=true');
    expect(dry.body.resources).toMatchObject([{ action: 'update', changes: ['repo_token'] }]);
    expect(JSON.stringify(dry.body)).not.toContain('glpat-other-token');
    expect(t.sealer.open(row().repoTokenSealed!)).toBe(TOKEN);

    expect((await apply(doc('null'))).body.resources).toMatchObject([{ action: 'update', changes: ['repo_token'] }]);
    expect(row().repoTokenSealed).toBeNull();
  });
});
