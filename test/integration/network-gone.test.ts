// The instance's network removed behind svc's back while a managed service's and an app's containers are
// stopped (issue 35, defect 6): the engine can never start those containers again (they keep the removed
// network's id, even once a network of that name exists again). svc makes the network again and recreates
// both containers from their specs: the app serves and the service is active again, with no API call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { freePort } from '../support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../support/service-images.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;

beforeAll(async () => {
  await Promise.all([ensureTestImages(runtime), ensureServiceImages()]);
  t = await startTestDaemon('netgone', serviceImageEnv());
}, 300_000);
afterAll(async () => {
  await t?.close();
});

const served = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
};

describe('a network removed behind svc', () => {
  it('is made again, and the stopped app and service containers are recreated on it: the app serves and the service is active again', async () => {
    const svc = await t.api('POST', '/api/services', { name: 'cache', type: 'redis' });
    expect(svc.status, JSON.stringify(svc.body)).toBe(201);
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'netgone', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const d = await t.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
    expect(d.status, JSON.stringify(d.body)).toBe(202);
    await waitFor(async () => (await t.api('GET', `/api/deploys/${d.body.id}`)).body.status === 'success', { timeoutMs: 60_000, what: 'deploy' });
    await waitFor(async () => (await t.api('GET', `/api/services/${svc.body.id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'service active' });
    expect(await served(port)).toBe(true);

    const ours = await runtime.list({ [LABELS.instance]: t.instance });
    const stopped = ours.filter((c) => c.labels[LABELS.role] === 'app' || c.labels[LABELS.role] === 'service');
    expect(stopped.map((c) => c.labels[LABELS.role]).sort()).toEqual(['app', 'service']);
    let healStart = 0;
    // With no svc watching (the heal of a plain `docker stop` would start them again before the removal).
    await t.restart(async () => {
      for (const c of stopped) await runtime.docker.getContainer(c.id).stop({ t: 1 });
      await runtime.docker.getNetwork(t.network).remove();
      healStart = Date.now();
    });
    const daemonMs = Date.now() - healStart;

    await waitFor(() => served(port).catch(() => false), { timeoutMs: 15_000, intervalMs: 50, what: 'the app serving again' });
    const appMs = Date.now() - healStart;
    await waitFor(async () => (await t.api('GET', `/api/services/${svc.body.id}`)).body.status === 'active', { timeoutMs: 15_000, intervalMs: 50, what: 'the service active again' });
    const serviceMs = Date.now() - healStart;
    console.log(`network gone: app serving again after ${appMs} ms, service active again after ${serviceMs} ms, from the network's removal (the daemon's start took ${daemonMs} ms of it)`);

    const now = await runtime.list({ [LABELS.instance]: t.instance });
    for (const c of stopped) {
      const again = now.find((x) => x.name === c.name)!;
      expect(again.running).toBe(true);
      expect(again.id).not.toBe(c.id); // recreated: the old one could never start again
      expect(again.address).toBeTruthy();
    }
    const a = (await t.api('GET', `/api/apps/${app.body.id}`)).body;
    expect(a.status).toBe('active');
    const events = (await t.api('GET', `/api/apps/${app.body.id}/events`)).body;
    expect(JSON.stringify(events)).toMatch(/network .* was gone; network and container made again/);
    expect(JSON.stringify(events)).not.toMatch(/could not restart/);
  });
});
