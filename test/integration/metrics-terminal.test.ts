// Metrics and the terminal against a whole daemon on the real engine (issue 22): a busy container's CPU,
// memory and cap appear in /api/apps/{id}/metrics, `svc top` and /metrics, and a stopped one gets no new
// points; the terminal in headless Chromium runs `echo` and shows its answer, is refused without a session,
// without the CSRF token and from another origin, and `svc exec` returns the command's output and code.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { launchBrowser, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/caddy.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const repo = join(import.meta.dirname, '../..');
let t: TestDaemon;
let browser: TestBrowser | undefined;
let app: { id: number; name: string };
let busy: Promise<unknown> | undefined;

beforeAll(async () => {
  await ensureTestImages();
  t = await startTestDaemon('metrics', { SVC_METRICS_INTERVAL_SECONDS: '1', SVC_DEPLOY_WATCH_SECONDS: '0' });
  const res = await t.api('POST', '/api/apps', { name: 'mt-web', internal_port: 3000, access_mode: 'port', fallback_port: await freePort(), resources: { memory_mb: 64 } });
  expect(res.status).toBe(201);
  app = res.body;
  await deployReaching(t, await requestImageDeploy(t, app.id, WEB_V1), (d) => d.status === 'success', 'succeeded');
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await busy?.catch(() => {});
  await t?.close();
});

function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(join(repo, 'node_modules/.bin/tsx'), [join(repo, 'src/cli.ts'), ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_URL: t.url, SVC_TOKEN: t.token }, timeout: 60_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const liveContainer = async () => (await t.daemon.runtime.list({ 'svc.instance': t.instance, 'svc.app-id': String(app.id) })).find((c) => c.running)!;

/** Opens a WebSocket and answers the HTTP status of a refused handshake, or 101 when it opened. */
function handshake(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => resolve(-1));
  });
}

describe('metrics', () => {
  it('shows a busy container: CPU, memory under its cap, in the API, svc top and /metrics', async () => {
    const c = await liveContainer();
    // About 12 s of one busy core inside the container (busybox sh only), ended by itself.
    busy = t.daemon.runtime.exec(c.name, ['sh', '-c', 'sh -c "while :; do :; done" & p=$!; sleep 12; kill $p']);
    const m = await waitFor(
      async () => {
        const r = (await t.api('GET', `/api/apps/${app.id}/metrics?range=1h`)).body;
        return r.points.some((p: { cpu_cores: number | null }) => (p.cpu_cores ?? 0) > 0.3) ? r : undefined;
      },
      { timeoutMs: 20_000, what: 'a point with the busy CPU' },
    );
    expect(m).toMatchObject({ app: 'mt-web', range: '1h', step_seconds: 10 });
    const last = m.points.at(-1);
    expect(last.memory_bytes).toBeGreaterThan(0);
    expect(last.memory_limit_bytes).toBe(64 * 1024 * 1024);
    expect(last.containers).toBe(1);
    expect(m.containers).toEqual([expect.objectContaining({ name: c.name })]);
    expect((await t.api('GET', `/api/apps/${app.id}/metrics?range=2d`)).status).toBe(400);
    expect((await t.api('GET', '/api/host/metrics?range=24h')).body.points.at(-1)).toMatchObject({ disk_total_bytes: expect.any(Number), memory_limit_bytes: expect.any(Number) });

    const top = await svc(['top']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/mt-web\s+app\s+[0-9.]+%/);

    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    const prom = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.token}` } })).text();
    expect(prom).toMatch(/svc_memory_limit_bytes\{kind="app",name="mt-web"\} 67108864/);
    expect(prom).toMatch(/svc_cpu_cores\{kind="host",name="host"\}/);
  }, 40_000);
});

describe('terminal', () => {
  it('svc exec runs a command in the container and exits with its code', async () => {
    const r = await svc(['exec', 'mt-web', '--', 'sh', '-c', 'echo hi from $(hostname); exit 3']);
    expect(r.stdout).toMatch(/hi from /);
    expect(r.code).toBe(3);
    const events = (await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string; message: string }[];
    const terminal = events.filter((e) => e.step === 'terminal').map((e) => e.message);
    expect(terminal.join('\n')).toMatch(/terminal opened by admin \(cli\) in .* \(sh\)/);
    expect(terminal.join('\n')).not.toMatch(/hostname|exit 3"/);
  }, 30_000);

  it('works in a browser: types echo, reads the answer', async () => {
    browser = await launchBrowser();
    const page = await browser.context.newPage();
    await page.goto(t.url + '/login');
    await page.getByLabel('Username', { exact: true }).fill('admin');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL((u) => u.pathname === '/');
    await page.goto(`${t.url}/apps/${app.id}/metrics`);
    await page.locator('#metrics svg').first().waitFor();
    await page.getByRole('navigation', { name: 'App' }).getByRole('link', { name: 'Terminal' }).click();
    await page.locator('#terminal[data-connected]').waitFor({ timeout: 10_000 });
    await page.locator('#terminal').click();
    await page.keyboard.type('echo hi-$((6*7))\n');
    await page.locator('.xterm-rows', { hasText: 'hi-42' }).waitFor({ timeout: 10_000 });
    await page.keyboard.type('exit\n');
    await page.getByText(/The session ended \(exit 0\)/).waitFor({ timeout: 10_000 });
    const events = (await t.api('GET', `/api/apps/${app.id}/events`)).body as { step: string; message: string }[];
    expect(events.some((e) => e.step === 'terminal' && /opened by admin \(ui\)/.test(e.message))).toBe(true);
    expect(events.map((e) => e.message).join('\n')).not.toContain('hi-$((6*7))');

    // Refusals, with the browser's real cookies.
    const cookies = await browser.context.cookies(t.url);
    const cookie = cookies.map((k) => `${k.name}=${k.value}`).join('; ');
    const wsUrl = t.url.replace(/^http/, 'ws') + `/apps/${app.id}/terminal/ws`;
    const token = await page.goto(`${t.url}/apps/${app.id}/terminal`).then(() => page.locator('#terminal').getAttribute('data-ws'));
    const csrf = new URL(token!, t.url).searchParams.get('csrf')!;
    const origin = t.url;
    expect(await handshake(`${wsUrl}?csrf=${encodeURIComponent(csrf)}`, { origin })).toBe(303); // no session: to the login page
    expect(await handshake(wsUrl, { cookie, origin })).toBe(403); // no CSRF token
    expect(await handshake(`${wsUrl}?csrf=forged`, { cookie, origin })).toBe(403);
    expect(await handshake(`${wsUrl}?csrf=${encodeURIComponent(csrf)}`, { cookie, origin: 'http://evil.example' })).toBe(403);
    expect(await handshake(`${wsUrl}?csrf=${encodeURIComponent(csrf)}`, { cookie, origin })).toBe(101);
    // The API's exec takes a token only, never the session cookie.
    const apiUrl = t.url.replace(/^http/, 'ws') + `/api/apps/${app.id}/exec`;
    expect(await handshake(apiUrl, { cookie, origin })).toBe(403);
    expect(await handshake(apiUrl, {})).toBe(401);
  }, 40_000);
});

describe('per replica', () => {
  it('keeps each replica of a scaled app beside the sum, answered with ?by=replica', async () => {
    expect((await t.api('PUT', `/api/apps/${app.id}`, { replicas: 2 })).status).toBe(200);
    const m = await waitFor(
      async () => {
        const r = (await t.api('GET', `/api/apps/${app.id}/metrics?by=replica`)).body;
        const both = r.replicas?.length === 2 && r.replicas.every((x: { points: { memory_bytes: number | null }[] }) => (x.points.at(-1)?.memory_bytes ?? 0) > 0);
        return both && r.points.at(-1)?.containers === 2 ? r : undefined;
      },
      { timeoutMs: 30_000, what: 'points of both replicas' },
    );
    expect(m.replicas.map((r: { replica: number }) => r.replica)).toEqual([0, 1]);
    expect(m.replicas[1].points.at(-1)).toMatchObject({ containers: 1, memory_limit_bytes: 64 * 1024 * 1024 });
    expect((await t.api('GET', `/api/apps/${app.id}/metrics`)).body.replicas).toBeUndefined();
  }, 40_000);
});

describe('a stopped container', () => {
  it('gets no new points', async () => {
    expect((await t.api('PUT', `/api/apps/${app.id}`, { replicas: 0 })).status).toBe(200);
    await waitFor(async () => !(await liveContainer()), { timeoutMs: 20_000, what: 'the app stopped' });
    const count = async () => (await t.api('GET', `/api/apps/${app.id}/metrics`)).body.points.length as number;
    const samples = async () => ((t.daemon.db.$client.prepare("SELECT sum(samples) n FROM metric_samples WHERE subject = ? AND tier = 10").get(`app:${app.id}`) as { n: number }).n);
    // Two whole rounds after the stop (each round writes the host's row): the app's rows do not move.
    const hostRounds = () => (t.daemon.db.$client.prepare("SELECT sum(samples) n FROM metric_samples WHERE subject = 'host' AND tier = 10").get() as { n: number }).n;
    const before = await samples();
    const start = hostRounds();
    await waitFor(() => hostRounds() >= start + 2, { timeoutMs: 10_000, what: 'two more rounds' });
    expect(await samples()).toBe(before);
    expect(await count()).toBeGreaterThan(0); // the history stays
    const top = (await t.api('GET', '/api/metrics/top')).body;
    expect(top.subjects.find((s: { name: string }) => s.name === 'mt-web')).toBeUndefined();
  }, 40_000);
});
