// `svc previews` (issue 20): the table, and the settings the flags make (merged over the current ones).
import { describe, expect, it } from 'vitest';
import { mergeSettings, previewsCommand, previewsTable } from '../../../src/cli/previews.js';
import { CliError, type Client } from '../../../src/cli/client.js';
import { createTestApi } from '../../support/api.js';
import { getAppByName } from '../../../src/store/apps.js';
import { settingsOf } from '../../../src/previews/settings.js';

describe('svc previews', () => {
  it('lists each preview with its state, commit, branch, age and URL', () => {
    const now = new Date('2026-01-02T12:00:00Z');
    expect(previewsTable([
      { pr_number: 12, app: 'web-pr-12', status: 'running', head_sha: 'a'.repeat(40), head_ref: 'feature', fork: false, last_commit_at: '2026-01-02T09:00:00Z', access_url: 'http://h:20000' },
      { pr_number: 3, app: 'web-pr-3', status: 'deploying', head_sha: 'b'.repeat(40), head_ref: 'x', fork: true, last_commit_at: '2025-12-30T12:00:00Z', access_url: null },
    ], now)).toBe(
      'PR         APP        STATUS     COMMIT        BRANCH   AGE  URL\n' +
        '#12        web-pr-12  running    aaaaaaaaaaaa  feature  3h   http://h:20000\n' +
        '#3 (fork)  web-pr-3   deploying  bbbbbbbbbbbb  x        3d   -\n',
    );
  });

  it('merges the flags over the current settings; no flag changes nothing; bad flags are usage errors', () => {
    expect(mergeSettings({ enabled: true, max: 5 }, {})).toBeNull();
    expect(mergeSettings(null, { on: true, max: '3', 'ttl-days': '2', services: 'fresh', forks: true, memory: '128', env: ['A=1', 'B=x=y'] })).toEqual({
      enabled: true, max: 3, ttl_days: 2, services: 'fresh', forks: true, resources: { memory_mb: 128 }, env: { A: '1', B: 'x=y' },
    });
    expect(mergeSettings({ enabled: true, env: { A: '1', B: '2' }, resources: { memory_mb: 256, cpus: 0.5 } }, { off: true, 'unset-env': ['A'], cpus: '1' })).toEqual({
      enabled: false, env: { B: '2' }, resources: { memory_mb: 256, cpus: 1 },
    });
    expect(() => mergeSettings(null, { on: true, off: true })).toThrow(/exclude/);
    expect(() => mergeSettings(null, { max: 'many' })).toThrow(/--max must be a number/);
    expect(() => mergeSettings(null, { env: ['NOEQUALS'] })).toThrow(/KEY=VALUE/);
  });

  it('sets the settings through the API and lists the previews (the real hono app)', async () => {
    const t = createTestApi({ env: { SVC_PREVIEW_PORTS: '21000-21009' } });
    await t.login();
    expect((await t.request('POST', '/api/apps', { name: 'web', build_mode: 'svc_build', repo_url: 'https://github.com/acme/web', fallback_port: 18080 })).status).toBe(201);
    const client: Client = {
      url: 'http://x',
      raw: async () => new Response(),
      async json(method: string, path: string, body?: unknown) {
        const res = await t.request(method, path, body);
        if (res.status >= 300) throw new CliError(res.body.error);
        return res.body;
      },
    } as Client;
    const out: string[] = [];
    const write = (s: string) => void out.push(s);
    await previewsCommand(client, { app: 'web', flags: { on: true, services: 'fresh', env: ['STAGE=pr'] }, write });
    expect(settingsOf(getAppByName(t.db, 'web')!.previews)).toMatchObject({ enabled: true, services: 'fresh', env: { STAGE: 'pr' } });
    expect(out.join('')).toBe('previews: on · max 5 · ttl 7 days · services fresh · forks no · 256 MiB, 0.5 CPU each · env STAGE\nno previews\n');
    await expect(previewsCommand(client, { app: 'web', flags: { services: 'shared' }, write })).rejects.toThrow(/services/);
    out.length = 0;
    await previewsCommand(client, { app: 'web', flags: { off: true }, write });
    expect(out[0]).toBe('previews: off\n');
  });
});
