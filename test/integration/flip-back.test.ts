// The watch after the switch end to end (API.md "Watch after the switch (flip-back)"): the real daemon,
// Docker engine, host Caddy and DNS responder, with a 12 s window. Versions that pass their health check
// and then exit, or then start failing it, are flipped back and the old version serves again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_DECAYS, WEB_EXITS_LATER, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const WINDOW_S = 12;
const runtime = createDockerRuntime({ log: silentLogger });
let t: TestDaemon;
let app: { id: number; port: number };

beforeAll(async () => {
  await ensureTestImages(runtime);
  t = await startTestDaemon('flipback', { SVC_DEPLOY_WATCH_SECONDS: String(WINDOW_S) });
  const port = await freePort();
  const res = await t.api('POST', '/api/apps', { name: 'fb-web', internal_port: 3000, access_mode: 'port', fallback_port: port });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  app = { id: res.body.id, port };
});
afterAll(async () => {
  await t?.close();
});

const deploy = (image: string) => requestImageDeploy(t, app.id, image);
const getDeploy = async (id: number) => (await t.api('GET', `/api/deploys/${id}`)).body;
const until = (id: number, pred: (d: any) => boolean, what: string, timeoutMs = 45_000) => deployReaching(t, id, pred, what, timeoutMs);

async function body() {
  try {
    const res = await fetch(`http://127.0.0.1:${app.port}/`, { signal: AbortSignal.timeout(3_000) });
    return `${res.status} ${await res.text()}`;
  } catch (err) {
    return String(err);
  }
}
const serves = (needle: string) => waitFor(async () => (await body()).includes(needle), { timeoutMs: 10_000, what: `fb-web to serve ${needle}` });
const containers = async () =>
  (await runtime.list({ [LABELS.instance]: t.instance, [LABELS.app]: 'fb-web' })).map((c) => ({ name: c.name, running: c.running })).sort((a, b) => a.name.localeCompare(b.name));

async function expectFlippedBack(id: number, liveBefore: string, error: RegExp) {
  const d = await until(id, (x) => x.status === 'auto_rollback', 'to flip back');
  expect(d.error).toMatch(error);
  expect(d.watch_until).toBeNull();
  const events = (await t.api('GET', `/api/deploys/${id}/events`)).body as { step: string; level: string }[];
  expect(events.slice(-4).map((e) => [e.step, e.level])).toEqual([['watch', 'warn'], ['route_update', 'info'], ['stop_old', 'info'], ['finalize', 'error']]);
  const detail = (await t.api('GET', `/api/apps/${app.id}`)).body;
  expect(detail).toMatchObject({ status: 'active', image_ref: WEB_V1, live_container_name: liveBefore });
  const appEvents = (await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string; message: string }[];
  expect(appEvents.at(-1)!.step).toBe('flip_back');
  expect(appEvents.at(-1)!.message).toContain(`${t.instance}-fb-web-${id}`);
  expect(appEvents.at(-1)!.message).toContain(liveBefore);
  // The proxy's DNS answer follows within its refresh; on a loaded machine the first request may still
  // race it, so wait for the old version rather than asking once.
  await serves('v1');
  expect(await containers()).toEqual([{ name: liveBefore, running: true }]);
}

describe('watch after the switch', () => {
  let live = '';

  it('a first deploy is not watched', async () => {
    const id = await deploy(WEB_V1);
    const d = await until(id, (x) => x.status === 'success', 'to succeed');
    expect(d.watch_until).toBeNull();
    live = `${t.instance}-fb-web-${id}`;
    await serves('v1');
  });

  it('a version that passes its health check, then exits: flipped back, the old version serves again', async () => {
    const id = await deploy(WEB_EXITS_LATER);
    const d = await until(id, (x) => x.status === 'success' && x.drain_until === null, 'to succeed and drain its old version');
    expect(Date.parse(d.watch_until)).toBeGreaterThan(Date.now());
    await serves('exits-later');
    expect(await containers()).toEqual([{ name: live, running: false }, { name: `${t.instance}-fb-web-${id}`, running: true }]);
    await expectFlippedBack(id, live, /exited with code 1/);
  });

  it('a version that starts failing its probe: flipped back', async () => {
    const id = await deploy(WEB_DECAYS);
    await until(id, (x) => x.status === 'success', 'to succeed');
    await expectFlippedBack(id, live, /3 health probes in a row failed \(last: HTTP 500\)/);
  });

  it('a newer deploy ends the window; a healthy deploy\'s kept container is removed after the window', async () => {
    const second = await deploy(WEB_V2);
    await until(second, (x) => x.status === 'success' && x.watch_until, 'to be watched');
    const third = await deploy(WEB_V1);
    await until(third, (x) => x.status === 'success' && x.drain_until === null, 'to succeed and drain its old version');
    expect((await getDeploy(second)).watch_until).toBeNull();
    // The v1 container kept by the second deploy is gone; the v2 one is kept by the third.
    expect(await containers()).toEqual([{ name: `${t.instance}-fb-web-${second}`, running: false }, { name: `${t.instance}-fb-web-${third}`, running: true }]);
    await until(third, (x) => x.watch_until === null, 'to close its window', (WINDOW_S + 5) * 1000);
    expect(await containers()).toEqual([{ name: `${t.instance}-fb-web-${third}`, running: true }]);
    expect((await getDeploy(third)).status).toBe('success');
    live = `${t.instance}-fb-web-${third}`;
    await serves('v1');
  });

  it('a daemon restart inside the window still flips back', async () => {
    expect((await t.api('POST', `/api/apps/${app.id}/env`, { key: 'EXIT_AFTER', value: '6' })).status).toBe(201);
    const id = await deploy(WEB_EXITS_LATER);
    await until(id, (x) => x.status === 'success', 'to succeed');
    await t.restart();
    expect((await getDeploy(id)).status).toBe('success'); // the restart happened before the exit
    await expectFlippedBack(id, live, /exited with code 1/);
  });

  // Issue 17 section 5: a container someone stops, kills or removes through the engine's API says nothing
  // about its version: healed, not flipped back. And a rollback deploy is not watched at all.
  const heals = async () => ((await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string }[]).filter((e) => e.step === 'heal').length;
  async function expectHealed(id: number, healsBefore: number, image: string, needle: string) {
    await waitFor(async () => (await heals()) > healsBefore, { timeoutMs: 15_000, what: 'a heal event' });
    await serves(needle);
    const d = await getDeploy(id);
    expect(d.status).toBe('success');
    expect(d.error).toBeNull();
    const detail = (await t.api('GET', `/api/apps/${app.id}`)).body;
    expect(detail).toMatchObject({ status: 'active', image_ref: image, live_container_name: `${t.instance}-fb-web-${id}`, current_deploy_id: id });
  }

  it('docker kill of the watched container: healed, not flipped back', async () => {
    const id = await deploy(WEB_V2);
    const d = await until(id, (x) => x.status === 'success' && x.watch_until, 'to be watched');
    await serves('v2');
    const before = await heals();
    await runtime.docker.getContainer(`${t.instance}-fb-web-${id}`).kill();
    await expectHealed(id, before, WEB_V2, 'v2');
    expect(Date.now()).toBeLessThan(Date.parse(d.watch_until)); // it happened inside the window
    live = `${t.instance}-fb-web-${id}`;
  });

  it('docker rm -f of the watched container: recreated, not flipped back', async () => {
    const id = await deploy(WEB_V1);
    await until(id, (x) => x.status === 'success' && x.watch_until, 'to be watched');
    await serves('v1');
    const before = await heals();
    await runtime.docker.getContainer(`${t.instance}-fb-web-${id}`).remove({ force: true });
    await expectHealed(id, before, WEB_V1, 'v1');
    live = `${t.instance}-fb-web-${id}`;
  });

  it('a rollback deploy is not watched: docker kill of its container is healed, the version rolled back from stays away', async () => {
    const res = await t.api('POST', `/api/apps/${app.id}/deploys/rollback`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.id as number;
    const d = await until(id, (x) => x.status === 'success' && x.drain_until === null, 'to succeed and drain its old version');
    expect(d.image_ref).toBe(WEB_V2);
    expect(d.watch_until).toBeNull();
    await serves('v2');
    expect(await containers()).toEqual([{ name: `${t.instance}-fb-web-${id}`, running: true }]); // nothing kept
    const before = await heals();
    await runtime.docker.getContainer(`${t.instance}-fb-web-${id}`).kill();
    await expectHealed(id, before, WEB_V2, 'v2');
    expect(await containers()).toEqual([{ name: `${t.instance}-fb-web-${id}`, running: true }]);
  });
});
