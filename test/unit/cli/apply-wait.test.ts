// `svc apply` tells when an app it applied then fails (issue 18, section 5): it waits for the deploys the
// apply queued (their ids are in the answer) and prints how each ended; a failure makes the exit status 1.
import { describe, expect, it, beforeEach } from 'vitest';
import { waitForDeploys } from '../../../src/cli/apply-wait.js';
import { formatPlan } from '../../../src/cli/apply.js';
import type { Client } from '../../../src/cli/client.js';
import { createTestApi, type TestApi } from '../../support/api.js';

const sse = (status: string) =>
  new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(`event: deploy_event\ndata: {}\n\nevent: done\ndata: {"status":"${status}"}\n\n`)); c.close(); } }));

function fakeDaemon(deploys: Record<number, { status: string; image_ref: string; error: string | null }>): Client {
  return {
    url: 'http://x',
    raw: async (path: string) => sse(deploys[Number(/deploys\/(\d+)/.exec(path)![1])].status),
    json: async (_m: string, path: string) => deploys[Number(/deploys\/(\d+)/.exec(path)![1])] as never,
  };
}

describe('svc apply waits for its deploys', () => {
  it('prints each outcome and counts the failures', async () => {
    const client = fakeDaemon({
      4: { status: 'success', image_ref: 'web:1', error: null },
      5: { status: 'failed', image_ref: 'worker:1', error: 'pull access denied for worker' },
    });
    const lines: string[] = [];
    const failed = await waitForDeploys(client, [
      { kind: 'Service', name: 'db', action: 'create', changes: [] },
      { kind: 'App', name: 'web', action: 'create', changes: [], deploy: 'web:1', deploy_id: 4 },
      { kind: 'App', name: 'worker', action: 'create', changes: [], deploy: 'worker:1', deploy_id: 5 },
    ], (l) => lines.push(l));
    expect(failed).toBe(1);
    expect(lines[0]).toBe('waiting for 2 deploys (--no-wait to skip)');
    expect(lines).toContain('App/web: deploy 4 of web:1 succeeded');
    expect(lines.find((l) => l.startsWith('App/worker'))).toMatch(/^App\/worker: deploy 5 of worker:1 failed: pull access denied for worker/);
  });

  it('waits for nothing when the apply queued no deploy', async () => {
    const lines: string[] = [];
    expect(await waitForDeploys(fakeDaemon({}), [{ kind: 'App', name: 'web', action: 'unchanged', changes: [] }], (l) => lines.push(l))).toBe(0);
    expect(lines).toEqual([]);
  });

  it('the plan line names the deploy', () => {
    const text = formatPlan({ source: 'api', revision: 'r', dry_run: false, errors: [], resources: [{ kind: 'App', name: 'web', action: 'update', changes: [], deploy: 'web:1' }] });
    expect(text).toBe('~ App/web update: deploy web:1\n');
  });
});

describe('POST /api/manifests/apply', () => {
  let t: TestApi;
  beforeEach(async () => {
    t = createTestApi();
    await t.login();
  });

  it('names the deploy it queued for each app (deploy_id), none in a dry run', async () => {
    const doc = 'apiVersion: svc/v1\nkind: App\nmetadata: {name: web}\nspec: {image_ref: "img:1", fallback_port: 18300}\n';
    const dry = await t.request('POST', '/api/manifests/apply', { content: doc, dry_run: true });
    expect(dry.body.resources[0]).toMatchObject({ action: 'create', deploy: 'img:1' });
    expect(dry.body.resources[0].deploy_id).toBeUndefined();
    const res = await t.request('POST', '/api/manifests/apply', { content: doc });
    const id = res.body.resources[0].deploy_id;
    expect(id).toEqual(expect.any(Number));
    expect((await t.request('GET', `/api/deploys/${id}`)).body).toMatchObject({ image_ref: 'img:1', status: 'pending', origin: 'manifest' });
  });
});
