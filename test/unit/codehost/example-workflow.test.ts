// examples/github-actions/deploy.yml: its "Notify svc" step, run by bash as GitHub Actions would, against
// the real API served on a loopback port. The signature it computes must be accepted and the deploy queued.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createTestApi } from '../../support/api.js';
import { listDeploys } from '../../../src/store/deploys.js';

const run = promisify(execFile);
const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('examples/github-actions/deploy.yml', () => {
  it('its signing step posts a workflow_run svc accepts and deploys', async () => {
    const doc = parse(await readFile(new URL('../../../examples/github-actions/deploy.yml', import.meta.url), 'utf8'));
    const step = doc.jobs.deploy.steps.find((s: { name?: string }) => s.name === 'Notify svc');
    const t = createTestApi({ env: { SVC_CODEHOST_WEBHOOK_SECRET: 'example-secret' } });
    await t.login();
    const app = await t.request('POST', '/api/apps', { name: 'ex-web', fallback_port: 18555, image_ref: 'ghcr.io/acme/web:old', repo_url: 'https://github.com/acme/web', ci_workflow: '.github/workflows/deploy.yml' });
    expect(app.status).toBe(201);
    const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const dir = await mkdtemp(join(tmpdir(), 'svc-test-gha-'));
    // The environment GitHub Actions gives the step (secrets and default variables).
    const step_ = (o: { secret?: string; runId?: string } = {}) =>
      run('bash', ['-c', step.run], {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          SVC_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          SVC_WEBHOOK_SECRET: o.secret ?? 'example-secret',
          GITHUB_SHA: SHA,
          GITHUB_REF_NAME: 'main',
          GITHUB_REPOSITORY: 'acme/web',
          GITHUB_WORKFLOW_REF: 'acme/web/.github/workflows/deploy.yml@refs/heads/main',
          GITHUB_RUN_ID: o.runId ?? '991',
          GITHUB_RUN_ATTEMPT: '1',
        },
      });
    try {
      const { stdout } = await step_();
      const [deploy] = listDeploys(t.db, app.body.id);
      expect(JSON.parse(stdout)).toEqual({ deploys: [deploy.id] });
      expect(deploy).toMatchObject({ imageRef: `ghcr.io/acme/web:${SHA}`, trigger: 'webhook' });
      // The same run posted again is a duplicate (X-GitHub-Delivery is the run id and attempt).
      const again = await step_();
      expect(JSON.parse(again.stdout)).toEqual({ duplicate: true });
      // A wrong secret is refused (curl --fail-with-body exits non-zero).
      await expect(step_({ secret: 'wrong', runId: '992' })).rejects.toThrow(/401|unauthenticated/);
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
