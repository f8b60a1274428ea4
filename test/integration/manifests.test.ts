// End to end: manifests in the daemon's watched directory become a running app linked to a running
// Postgres; hand edits are set back as drift; a removed file deletes its app (but not its service).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_ENV } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon;
let dir: string;
let port: number;

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureServiceImages()]);
  dir = mkdtempSync(join(tmpdir(), 'svc-mf-e2e-'));
  port = await freePort();
  t = await startTestDaemon('mfe2e', { ...serviceImageEnv(), SVC_MANIFESTS_DIR: dir });
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const stack = (mode: string) => `apiVersion: svc/v1
kind: Service
metadata: {name: mfe-db}
spec: {type: postgres}
---
apiVersion: svc/v1
kind: App
metadata: {name: mfe-web}
spec:
  image_ref: ${WEB_ENV}
  internal_port: 3000
  fallback_port: ${port}
  env:
    - {key: MODE, value: ${mode}}
  services:
    - {name: mfe-db, alias: DB}
`;

async function containerEnv(): Promise<Record<string, string>> {
  const text = await waitFor(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/cgi-bin/env`, { signal: AbortSignal.timeout(5_000) });
    return res.status === 200 ? await res.text() : undefined;
  }, { timeoutMs: 30_000, what: 'the app to answer through the proxy' });
  return Object.fromEntries(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

const appNamed = async (name: string) => ((await t.api('GET', '/api/apps')).body as any[]).find((a) => a.name === name);

describe('manifests end to end', () => {
  it('a manifest file becomes a running app linked to a running Postgres', async () => {
    writeFileSync(join(dir, 'stack.yaml'), stack('prod'));
    const app = await waitFor(async () => {
      const a = await appNamed('mfe-web');
      return a?.status === 'active' ? a : undefined;
    }, { timeoutMs: 120_000, what: 'mfe-web active' });
    const svc = await waitFor(async () => {
      const s = ((await t.api('GET', '/api/services')).body as any[]).find((x) => x.name === 'mfe-db');
      if (s?.status === 'error') throw new Error(s.error);
      return s?.status === 'active' ? s : undefined;
    }, { timeoutMs: 120_000, what: 'mfe-db active' });
    expect(svc).toMatchObject({ linked_apps: [{ name: 'mfe-web' }] });
    const env = await containerEnv();
    expect(env).toMatchObject({ MODE: 'prod', DB_HOST: `${t.instance}-svc-mfe-db`, DB_PORT: '5432' });
    expect(env.DB_PASSWORD).toMatch(/.{8,}/);
    const list = (await t.api('GET', '/api/manifests')).body;
    expect(list).toEqual([expect.objectContaining({ source: 'dir', location: dir, errors: [] })]);
    const events = (await t.api('GET', `/api/apps/${app.id}/events`)).body;
    expect(events[0]).toMatchObject({ step: 'manifest', message: expect.stringContaining('created from the dir manifests') });
  });

  it('a setting changed through the API is set back at the next apply of the directory, as a drift event', async () => {
    const app = await appNamed('mfe-web');
    expect((await t.api('PUT', `/api/apps/${app.id}`, { health_check_path: '/by-hand' })).status).toBe(200);
    writeFileSync(join(dir, 'stack.yaml'), stack('prod')); // same content: an apply of an unchanged revision
    await waitFor(async () => (await appNamed('mfe-web')).health_check_path === '/', { timeoutMs: 15_000, what: 'drift corrected' });
    const events = (await t.api('GET', `/api/apps/${app.id}/events`)).body as any[];
    expect(events.at(-1)).toMatchObject({ step: 'drift', level: 'warn', message: expect.stringContaining('health_check_path') });
    expect((await t.api('GET', `/api/apps/${app.id}/deploys`)).body).toHaveLength(1);
  });

  it('an env change marks config_changed without a deploy; a bad edit changes nothing and is reported', async () => {
    writeFileSync(join(dir, 'stack.yaml'), stack('debug'));
    await waitFor(async () => (await appNamed('mfe-web')).config_changed === true, { timeoutMs: 15_000, what: 'config_changed' });
    writeFileSync(join(dir, 'stack.yaml'), stack('other').replace('internal_port: 3000', 'internal_port: 0'));
    const rec = await waitFor(async () => {
      const r = (await t.api('GET', '/api/manifests')).body[0];
      return r.errors.length > 0 ? r : undefined;
    }, { timeoutMs: 15_000, what: 'the error to be reported' });
    expect(rec.errors[0]).toMatchObject({ file: 'stack.yaml', document: 1, path: 'spec.internal_port' });
    const app = await appNamed('mfe-web');
    expect(app.status).toBe('active');
    const env = (await t.api('GET', `/api/apps/${app.id}/env`)).body as any[];
    expect(env.find((e) => e.key === 'MODE').value).toBe('debug');
  });

  it('removing the file deletes the app and its containers; the service stays without prune_services', async () => {
    unlinkSync(join(dir, 'stack.yaml'));
    await waitFor(async () => (await appNamed('mfe-web')) === undefined, { timeoutMs: 15_000, what: 'mfe-web deleted' });
    await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      return !res || res.status >= 500;
    }, { timeoutMs: 20_000, what: 'the app to stop answering' });
    expect(((await t.api('GET', '/api/services')).body as any[]).map((s) => s.name)).toEqual(['mfe-db']);
  });
});
