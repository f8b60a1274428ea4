// Two svc instances on one engine (a staging svc beside production, an old data directory beside a new
// one), neither given SVC_INSTANCE: each data directory gets its own identity, so each deploys, heals and
// sweeps only its own containers, even for apps of the same name, and a restart keeps the identity.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { freePort } from '../support/caddy.js';
import { startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { ensureTestImages, WEB_PORT, WEB_V1, WEB_V2 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const runtime = createDockerRuntime({ log: silentLogger });
let a: DaemonProcess | undefined;
let b: DaemonProcess | undefined;

beforeAll(async () => {
  await ensureTestImages();
  // No SVC_INSTANCE and no SVC_NETWORK: the data directory decides both.
  a = await startDaemonProcess('twin-a', { SVC_INSTANCE: '', SVC_NETWORK: '' });
  b = await startDaemonProcess('twin-b', { SVC_INSTANCE: '', SVC_NETWORK: '' });
});

afterAll(async () => {
  await a?.close();
  await b?.close();
});

const page = async (port: number) => (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined))?.text();

async function deployed(d: DaemonProcess, image: string, port: number) {
  const app = await d.api('POST', '/api/apps', { name: 'twin', image_ref: image, internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
  expect(app.status, JSON.stringify(app.body)).toBe(201);
  const deploy = await d.api('POST', `/api/apps/${app.body.id}/deploys`, {});
  expect(deploy.status).toBe(202);
  await waitFor(async () => {
    const s = (await d.api('GET', `/api/deploys/${deploy.body.id}`)).body.status;
    if (s === 'failed' || s === 'auto_rollback') throw new Error(`deploy ${s}: ${d.output().slice(-2000)}`);
    return s === 'success';
  }, { timeoutMs: 60_000, what: 'deploy success' });
  return { id: app.body.id as number, live: (await d.api('GET', `/api/apps/${app.body.id}`)).body.live_container_name as string };
}

describe('two instances on one engine without SVC_INSTANCE', () => {
  it('each deploys and heals its own app of the same name; neither removes a container of the other', async () => {
    const ia = a!.instance()!;
    const ib = b!.instance()!;
    expect(ia).toMatch(/^svc-[a-z0-9]{6}$/);
    expect(ib).toMatch(/^svc-[a-z0-9]{6}$/);
    expect(ia).not.toBe(ib);

    const [portA, portB] = [await freePort(), await freePort()];
    const appA = await deployed(a!, WEB_V1, portA);
    const appB = await deployed(b!, WEB_V2, portB);
    expect(appA.live).toBe(`${ia}-twin-1`);
    expect(appB.live).toBe(`${ib}-twin-1`);
    expect(await waitFor(() => page(portA))).toContain('svc-test web v1');
    expect(await waitFor(() => page(portB))).toContain('svc-test web v2');
    const bId = (await runtime.inspect(appB.live))!.id;
    expect((await runtime.inspect(appB.live, ib))?.address).toBeTruthy(); // on its own network, named after it

    // A heals its own container; B's is untouched.
    await run('docker', ['rm', '-f', appA.live]);
    await waitFor(async () => (await runtime.inspect(appA.live))?.running, { timeoutMs: 20_000, what: 'A recreated its container' });
    expect(await waitFor(() => page(portA), { timeoutMs: 10_000 })).toContain('svc-test web v1');
    // The heal event is written after the container runs (and may serve already): wait for it.
    const healed = `live container ${appA.live} was gone; recreated`;
    await waitFor(async () => (await a!.api('GET', `/api/apps/${appA.id}/events`)).body.some((e: { message: string }) => e.message === healed), { timeoutMs: 10_000, what: 'the heal event' });

    // A restart of A (orphan sweep at resync) keeps its identity and leaves B's container alone.
    await a!.stop();
    await a!.start();
    expect(a!.instance()).toBe(ia);
    await waitFor(async () => (await a!.api('GET', `/api/apps/${appA.id}`)).body.status === 'active', { timeoutMs: 20_000 });

    // Deleting A's app removes A's container only.
    expect((await a!.api('DELETE', `/api/apps/${appA.id}`)).status).toBe(204);
    await waitFor(async () => !(await runtime.inspect(appA.live)), { timeoutMs: 20_000, what: "A's container removed" });
    const bNow = await runtime.inspect(appB.live);
    expect(bNow).toMatchObject({ id: bId, running: true });
    expect(await page(portB)).toContain('svc-test web v2');
  });
});
