// Deploy and log endpoints through the real hono app (API.md "Deploys", "Logs"): handlers write a pending
// deploy and enqueue the app; streams replay from the database and wake on the bus. No engine but a fake.
import { describe, it, expect, beforeEach } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApi, type TestApi } from '../../support/api.js';
import { FakeRuntime } from '../../support/fake-runtime.js';
import { Bus } from '../../../src/controller/bus.js';
import { addDeployEvent, createDeploy, updateDeploy } from '../../../src/store/deploys.js';
import { apps, deploys } from '../../../src/store/schema/index.js';
import { observeApp, observeInstance } from '../../../src/observed/apps.js';

let t: TestApi;
let cookie: string;
beforeEach(async () => {
  t = createTestApi();
  cookie = (await t.login()).cookie;
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

async function makeApp(body: Record<string, unknown> = {}, api: TestApi = t): Promise<number> {
  const res = await api.request('POST', '/api/apps', { name: 'web', fallback_port: 8080, image_ref: 'ghcr.io/acme/web:1', ...body });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A deploy inserted through the store and moved to `status` (as the reconciler would have). */
function storedDeploy(api: TestApi, appId: number, imageRef: string, status: string, commitSha: string | null = null) {
  const d = createDeploy(api.db, api.enqueue, undefined, { appId, appName: 'web', imageRef, commitSha, trigger: 'manual' });
  updateDeploy(api.db, undefined, d.id, { status: status as 'success', completedAt: status === 'pending' ? null : '2026-01-01T00:00:00Z' });
  return d.id;
}

interface Frame {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

function parseFrames(text: string): Frame[] {
  return text
    .split('\n\n')
    .slice(0, -1) // the part after the last blank line is incomplete
    .map((block) => {
      const f: Frame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) f.comment = line.slice(1).trim();
        const m = /^(event|id|data): ?(.*)$/.exec(line);
        if (m) f[m[1] as 'event' | 'id' | 'data'] = m[2];
      }
      return f;
    });
}

/** Opens an SSE response and reads it frame by frame until a condition holds (or the stream ends). */
async function openStream(api: TestApi, path: string, headers: Record<string, string> = {}) {
  const res = await api.app.request(path, { headers: { cookie: `session=${cookie}`, ...headers } });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  return {
    res,
    get ended() {
      return ended;
    },
    async until(pred: (frames: Frame[]) => boolean): Promise<Frame[]> {
      while (!pred(parseFrames(text))) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          throw new Error(`stream ended first:\n${text}`);
        }
        text += decoder.decode(value, { stream: true });
      }
      return parseFrames(text);
    },
    /** Reads to the end (for streams that close by themselves). */
    async all(): Promise<Frame[]> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      ended = true;
      return parseFrames(text);
    },
    cancel: () => reader.cancel(),
  };
}

describe('POST /api/apps/{appID}/deploys', () => {
  it('202 with the deploy record, image from the app by default; enqueues the app', async () => {
    const id = await makeApp();
    t.enqueue.keys.length = 0;
    const res = await t.request('POST', `/api/apps/${id}/deploys`, {});
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: 1, app_id: id, image_ref: 'ghcr.io/acme/web:1', commit_sha: null, trigger: 'manual', origin: 'api', status: 'pending', step: null,
      error: null, started_at: null, completed_at: null, created_at: expect.stringMatching(ISO), env_diff: null, watch_until: null, drain_until: null,
    });
    expect(t.enqueue.keys).toEqual(['app:web']);
  });

  it('takes image_ref and commit_sha from the body; an empty body is fine', async () => {
    const id = await makeApp();
    const res = await t.request('POST', `/api/apps/${id}/deploys`, { image_ref: 'ghcr.io/acme/web:2', commit_sha: 'ABCDEF1234' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ image_ref: 'ghcr.io/acme/web:2', commit_sha: 'ABCDEF1234', trigger: 'manual' });
    expect((await t.request('POST', `/api/apps/${id}/deploys`, undefined, { contentType: 'application/json' })).status).toBe(202);
  });

  it('400 when neither the body nor the app has an image; nothing created', async () => {
    const id = await makeApp({ image_ref: undefined });
    const res = await t.request('POST', `/api/apps/${id}/deploys`, {});
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(t.db.select().from(deploys).all()).toEqual([]);
  });

  it.each([
    [{ image: 'x:1' }, ''],
    [{ commit_sha: 'not-hex!' }, 'commit_sha'],
    [{ commit_sha: 'abc12' }, 'commit_sha'],
    [{ image_ref: 'has space:1' }, 'image_ref'],
    [{ image_ref: '' }, 'image_ref'],
    [{ image_ref: 7 }, 'image_ref'],
  ])('400 invalid_request on a bad body %j', async (body, path) => {
    const id = await makeApp();
    const res = await t.request('POST', `/api/apps/${id}/deploys`, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.details.issues[0].path).toBe(path);
    expect(t.db.select().from(deploys).all()).toEqual([]);
  });

  it('400 on malformed JSON', async () => {
    const id = await makeApp();
    const res = await t.request('POST', `/api/apps/${id}/deploys`, undefined, { raw: '{"image_ref":' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
  });

  it('404 for an unknown app and for a non-numeric id', async () => {
    await makeApp();
    for (const path of ['/api/apps/99/deploys', '/api/apps/web/deploys', '/api/apps/1.5/deploys', '/api/apps/99/deploys/rollback']) {
      const res = await t.request('POST', path, {});
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('409 for an external_service app (deploy and rollback)', async () => {
    const id = await makeApp({ app_type: 'external_service', source: 'http://10.1.2.3:9000', image_ref: undefined });
    const res = await t.request('POST', `/api/apps/${id}/deploys`, { image_ref: 'x:1' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'conflict', error: expect.stringMatching(/external_service/) });
    storedDeploy(t, id, 'x:0', 'success'); // (an app that was managed once) so rollback has a target
    const rollback = await t.request('POST', `/api/apps/${id}/deploys/rollback`);
    expect(rollback.status).toBe(409);
    expect(rollback.body.error).toMatch(/external_service/);
    expect(t.db.select().from(deploys).all()).toHaveLength(1);
  });

  it('422 missing_required_env lists the keys and creates nothing', async () => {
    const id = await makeApp();
    expect((await t.request('POST', `/api/apps/${id}/env`, { key: 'DATABASE_URL', value: '', required: true })).status).toBe(201);
    expect((await t.request('POST', `/api/apps/${id}/env`, { key: 'API_KEY', value: '', is_secret: true, required: true })).status).toBe(201);
    expect((await t.request('POST', `/api/apps/${id}/env`, { key: 'SET', value: 'x', required: true })).status).toBe(201);
    const keys = t.enqueue.keys.length;
    const res = await t.request('POST', `/api/apps/${id}/deploys`, {});
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'missing_required_env', details: { missing: ['API_KEY', 'DATABASE_URL'] } });
    expect(t.db.select().from(deploys).all()).toEqual([]);
    expect(t.enqueue.keys.length).toBe(keys);
  });

  it('a newer deploy cancels the older pending one; a running one is left to finish', async () => {
    const id = await makeApp();
    const first = (await t.request('POST', `/api/apps/${id}/deploys`, {})).body.id;
    updateDeploy(t.db, undefined, first, { status: 'running', step: 'health_check' });
    const second = (await t.request('POST', `/api/apps/${id}/deploys`, { image_ref: 'ghcr.io/acme/web:2' })).body.id;
    const third = (await t.request('POST', `/api/apps/${id}/deploys`, { image_ref: 'ghcr.io/acme/web:3' })).body.id;

    expect((await t.request('GET', `/api/deploys/${first}`)).body.status).toBe('running');
    const cancelled = (await t.request('GET', `/api/deploys/${second}`)).body;
    expect(cancelled).toMatchObject({ status: 'cancelled', error: `superseded by deploy ${third}`, completed_at: expect.stringMatching(ISO) });
    expect((await t.request('GET', `/api/deploys/${second}/events`)).body).toEqual([
      expect.objectContaining({ level: 'warn', step: 'cancelled', message: `superseded by deploy ${third}` }),
    ]);
    expect((await t.request('GET', `/api/deploys/${third}`)).body.status).toBe('pending');
  });
});

describe('POST /api/apps/{appID}/deploys/rollback', () => {
  it('409 when there is no earlier successful deploy with a different image', async () => {
    const id = await makeApp();
    expect((await t.request('POST', `/api/apps/${id}/deploys/rollback`)).status).toBe(409);
    const live = storedDeploy(t, id, 'ghcr.io/acme/web:1', 'success');
    storedDeploy(t, id, 'ghcr.io/acme/web:0', 'failed');
    observeApp(t.db, id, { liveDeployId: live });
    const res = await t.request('POST', `/api/apps/${id}/deploys/rollback`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    expect(t.db.select().from(deploys).all()).toHaveLength(2);
  });

  it('202 with trigger rollback and the image (and commit) of the newest success that differs from the live one', async () => {
    const id = await makeApp();
    storedDeploy(t, id, 'ghcr.io/acme/web:1', 'success', 'aaaaaaa');
    storedDeploy(t, id, 'ghcr.io/acme/web:2', 'success', 'bbbbbbb');
    storedDeploy(t, id, 'ghcr.io/acme/web:4', 'auto_rollback');
    const live = storedDeploy(t, id, 'ghcr.io/acme/web:3', 'success', 'ccccccc');
    t.db.update(apps).set({ imageRef: 'ghcr.io/acme/web:3' }).where(eq(apps.id, id)).run();
    observeApp(t.db, id, { liveDeployId: live, liveImage: 'ghcr.io/acme/web:3', imageBasis: 'ghcr.io/acme/web:3' });
    t.enqueue.keys.length = 0;

    const res = await t.request('POST', `/api/apps/${id}/deploys/rollback`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: 5, trigger: 'rollback', status: 'pending', image_ref: 'ghcr.io/acme/web:2', commit_sha: 'bbbbbbb' });
    expect(t.enqueue.keys).toEqual(['app:web']);
  });

  // Issue 35 defect 2: a rollback of a built static site probed the spec's port (3000), not the 80 it served on.
  it('carries what the rolled-back deploy ran: its provider port, its environment snapshot and config version', async () => {
    const id = await makeApp();
    const first = storedDeploy(t, id, 'svc-build/web:aaaaaaa', 'success', 'aaaaaaa');
    const snapshot = t.sealer.sealJson({ GREETING: 'first' });
    updateDeploy(t.db, undefined, first, { buildPort: 80, envSnapshotSealed: snapshot, configVersion: 1 });
    const live = storedDeploy(t, id, 'svc-build/web:bbbbbbb', 'success', 'bbbbbbb');
    updateDeploy(t.db, undefined, live, { buildPort: 80, envSnapshotSealed: t.sealer.sealJson({ GREETING: 'second' }), configVersion: 2 });
    observeApp(t.db, id, { liveDeployId: live, liveImage: 'svc-build/web:bbbbbbb' });
    // A variable made required since: the rollback runs the old snapshot, so it does not block it.
    await t.request('POST', `/api/apps/${id}/env`, { key: 'NEEDED', value: '', required: true });

    const res = await t.request('POST', `/api/apps/${id}/deploys/rollback`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const row = t.db.select().from(deploys).where(eq(deploys.id, res.body.id)).get()!;
    expect(row).toMatchObject({ trigger: 'rollback', imageRef: 'svc-build/web:aaaaaaa', commitSha: 'aaaaaaa', buildPort: 80, envSnapshotSealed: snapshot, configVersion: 1 });
  });

  it('refuses with 422 when a required variable is missing', async () => {
    const id = await makeApp();
    storedDeploy(t, id, 'ghcr.io/acme/web:1', 'success');
    const live = storedDeploy(t, id, 'ghcr.io/acme/web:2', 'success');
    observeApp(t.db, id, { liveDeployId: live });
    await t.request('POST', `/api/apps/${id}/env`, { key: 'NEEDED', value: '', required: true });
    const res = await t.request('POST', `/api/apps/${id}/deploys/rollback`);
    expect(res.status).toBe(422);
    expect(res.body.details.missing).toEqual(['NEEDED']);
  });
});

describe('GET deploys and events', () => {
  it('lists an app\'s deploys newest first; GET one; 404 for unknown or non-numeric ids', async () => {
    const id = await makeApp();
    for (const tag of ['1', '2', '3']) await t.request('POST', `/api/apps/${id}/deploys`, { image_ref: `ghcr.io/acme/web:${tag}` });
    const list = await t.request('GET', `/api/apps/${id}/deploys`);
    expect(list.status).toBe(200);
    expect(list.body.map((d: { id: number; status: string }) => [d.id, d.status])).toEqual([[3, 'pending'], [2, 'cancelled'], [1, 'cancelled']]);
    const one = await t.request('GET', '/api/deploys/2');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body[1]);
    for (const path of ['/api/deploys/99', '/api/deploys/abc', '/api/deploys/99/events', '/api/deploys/x/events/stream', '/api/apps/99/deploys']) {
      expect((await t.request('GET', path)).status, path).toBe(404);
    }
  });

  it('events oldest first with the SPEC 2.3 fields', async () => {
    const id = await makeApp();
    const d = (await t.request('POST', `/api/apps/${id}/deploys`, {})).body.id;
    addDeployEvent(t.db, undefined, d, 'start', 'deploying web with image ghcr.io/acme/web:1');
    addDeployEvent(t.db, undefined, d, 'pull', 'pulling', 'info');
    addDeployEvent(t.db, undefined, d, 'pull', 'registry slow', 'warn');
    const res = await t.request('GET', `/api/deploys/${d}/events`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: 1, deploy_id: d, timestamp: expect.stringMatching(ISO), level: 'info', step: 'start', message: 'deploying web with image ghcr.io/acme/web:1' },
      { id: 2, deploy_id: d, timestamp: expect.stringMatching(ISO), level: 'info', step: 'pull', message: 'pulling' },
      { id: 3, deploy_id: d, timestamp: expect.stringMatching(ISO), level: 'warn', step: 'pull', message: 'registry slow' },
    ]);
  });

  it('401 without credentials', async () => {
    const id = await makeApp();
    for (const [method, path] of [
      ['POST', `/api/apps/${id}/deploys`], ['POST', `/api/apps/${id}/deploys/rollback`], ['GET', `/api/apps/${id}/deploys`],
      ['GET', '/api/deploys/1'], ['GET', '/api/deploys/1/events'], ['GET', '/api/deploys/1/events/stream'], ['GET', `/api/apps/${id}/logs/stream`],
    ]) {
      const res = await t.request(method, path, method === 'POST' ? {} : undefined, { cookie: 'none' });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.code).toBe('unauthenticated');
    }
    expect(t.db.select().from(deploys).all()).toEqual([]);
  });
});

describe('GET /api/deploys/{deployID}/events/stream', () => {
  it('replays every event as deploy_event with its id, then done with the final status, and closes', async () => {
    const id = await makeApp();
    const d = (await t.request('POST', `/api/apps/${id}/deploys`, {})).body.id;
    addDeployEvent(t.db, undefined, d, 'start', 'deploying');
    addDeployEvent(t.db, undefined, d, 'pull', 'pulling');
    addDeployEvent(t.db, undefined, d, 'health_check', 'no answer', 'error');
    updateDeploy(t.db, undefined, d, { status: 'auto_rollback' });

    const s = await openStream(t, `/api/deploys/${d}/events/stream`);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = await s.all();
    expect(frames.map((f) => [f.event, f.id])).toEqual([['deploy_event', '1'], ['deploy_event', '2'], ['deploy_event', '3'], ['done', undefined]]);
    expect(JSON.parse(frames[2].data!)).toEqual({ id: 3, deploy_id: d, timestamp: expect.stringMatching(ISO), level: 'error', step: 'health_check', message: 'no answer' });
    expect(JSON.parse(frames[3].data!)).toEqual({ status: 'auto_rollback' });
  });

  it('resumes after Last-Event-ID', async () => {
    const id = await makeApp();
    const d = (await t.request('POST', `/api/apps/${id}/deploys`, {})).body.id;
    for (const step of ['start', 'pull', 'start']) addDeployEvent(t.db, undefined, d, step, step);
    updateDeploy(t.db, undefined, d, { status: 'failed' });
    const frames = await (await openStream(t, `/api/deploys/${d}/events/stream`, { 'last-event-id': '2' })).all();
    expect(frames.map((f) => [f.event, f.id])).toEqual([['deploy_event', '3'], ['done', undefined]]);
  });

  it('follows a running deploy live (woken by the bus) and ends when it is final', async () => {
    const bus = new Bus();
    const api = createTestApi({ bus });
    cookie = (await api.login()).cookie;
    const id = await makeApp({}, api);
    const d = (await api.request('POST', `/api/apps/${id}/deploys`, {})).body.id;
    updateDeploy(api.db, bus, d, { status: 'running', step: 'pull' });
    addDeployEvent(api.db, bus, d, 'start', 'deploying');

    const s = await openStream(api, `/api/deploys/${d}/events/stream`);
    await s.until((f) => f.length === 1);
    addDeployEvent(api.db, bus, d, 'pull', 'pulling');
    await s.until((f) => f.length === 2);
    addDeployEvent(api.db, bus, d, 'finalize', 'done');
    updateDeploy(api.db, bus, d, { status: 'success' });
    const frames = await s.all();
    expect(frames.map((f) => f.event)).toEqual(['deploy_event', 'deploy_event', 'deploy_event', 'done']);
    expect(frames.slice(0, 3).map((f) => JSON.parse(f.data!).step)).toEqual(['start', 'pull', 'finalize']);
    expect(JSON.parse(frames[3].data!)).toEqual({ status: 'success' });
  });
});

describe('GET /api/apps/{appID}/logs/stream', () => {
  it('503 engine_unavailable without a runtime; 404 for an unknown app', async () => {
    const id = await makeApp();
    const res = await t.request('GET', `/api/apps/${id}/logs/stream`);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('engine_unavailable');

    const withEngine = createTestApi({ runtime: new FakeRuntime() });
    await withEngine.login();
    expect((await withEngine.request('GET', '/api/apps/42/logs/stream')).status).toBe(404);
    expect((await withEngine.request('GET', '/api/apps/web/logs/stream')).status).toBe(404);
  });

  it('status connected, then the live container\'s lines as stdout/stderr events with the engine time as id', async () => {
    const rt = new FakeRuntime({ images: ['web:1'] });
    const api = createTestApi({ runtime: rt });
    cookie = (await api.login()).cookie;
    const id = await makeApp({}, api);
    await rt.run({ name: 'svc-web-1', image: 'web:1', network: 'svc', labels: {} });
    for (const line of ['one', 'two', 'three']) rt.log('svc-web-1', line);
    rt.log('svc-web-1', 'oops', 'stderr');
    observeApp(api.db, id, { liveContainerName: 'svc-web-1' });

    const s = await openStream(api, `/api/apps/${id}/logs/stream?tail=3`);
    expect(s.res.status).toBe(200);
    const frames = await s.until((f) => f.length >= 4);
    await s.cancel();
    const times = rt.containers.get('svc-web-1')!.logs.map((l) => l.time);
    expect(frames).toEqual([
      { event: 'status', data: 'connected' },
      { event: 'stdout', data: 'two', id: times[1] },
      { event: 'stdout', data: 'three', id: times[2] },
      { event: 'stderr', data: 'oops', id: times[3] },
    ]);
    expect(rt.callsOf('logs')).toEqual([['svc-web-1', { follow: true, tail: 3 }]]);
  });

  it('follows the live container across a switch (status switched)', async () => {
    const rt = new FakeRuntime({ images: ['web:1', 'web:2'] });
    const bus = new Bus();
    const api = createTestApi({ runtime: rt, bus });
    cookie = (await api.login()).cookie;
    const id = await makeApp({}, api);
    await rt.run({ name: 'svc-web-1', image: 'web:1', network: 'svc', labels: {} });
    await rt.run({ name: 'svc-web-2', image: 'web:2', network: 'svc', labels: {} });
    rt.log('svc-web-1', 'old');
    rt.log('svc-web-2', 'new');
    observeApp(api.db, id, { liveContainerName: 'svc-web-1' });

    const s = await openStream(api, `/api/apps/${id}/logs/stream`);
    await s.until((f) => f.length === 2);
    observeApp(api.db, id, { liveContainerName: 'svc-web-2' });
    bus.emit('live', id);
    const frames = await s.until((f) => f.length === 4);
    await s.cancel();
    expect(frames.map((f) => [f.event, f.data])).toEqual([['status', 'connected'], ['stdout', 'old'], ['status', 'switched'], ['stdout', 'new']]);
  });

  it('follows every replica, lines of replica N >= 1 prefixed [rN] (on a Swarm they may run on other nodes)', async () => {
    const rt = new FakeRuntime({ images: ['web:1'] });
    const api = createTestApi({ runtime: rt });
    cookie = (await api.login()).cookie;
    const id = await makeApp({}, api);
    const deployId = createDeploy(api.db, api.enqueue, undefined, { appId: id, appName: 'web', imageRef: 'web:1', trigger: 'manual' }).id;
    for (const n of ['svc-web-1', 'svc-web-1-r1', 'svc-web-1-r2']) {
      await rt.run({ name: n, image: 'web:1', network: 'svc', labels: {} });
      rt.log(n, `hello from ${n}`);
    }
    observeApp(api.db, id, { liveContainerName: 'svc-web-1' });
    for (const slot of [1, 2]) observeInstance(api.db, id, slot, { deployId, containerName: `svc-web-1-r${slot}` });

    const s = await openStream(api, `/api/apps/${id}/logs/stream?tail=10`);
    const frames = await s.until((f) => f.length >= 4);
    await s.cancel();
    expect(frames.slice(1).map((f) => f.data).sort()).toEqual(['[r1] hello from svc-web-1-r1', '[r2] hello from svc-web-1-r2', 'hello from svc-web-1']);
  });

  it('400 on a bad tail', async () => {
    const api = createTestApi({ runtime: new FakeRuntime() });
    await api.login();
    const id = await makeApp({}, api);
    expect((await api.request('GET', `/api/apps/${id}/logs/stream?tail=-1`)).status).toBe(400);
    expect((await api.request('GET', `/api/apps/${id}/logs/stream?tail=abc`)).status).toBe(400);
  });
});
