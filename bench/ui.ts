// Web UI benchmark (`npm run bench:ui`): server render time of the dashboard and an app page with 50 and
// 1,000 apps (p50/p99, through the real hono app on SQLite), page weight (HTML + CSS + JS, before
// compression), and the time from a deploy's `route_update` event written to the database to its text
// appearing in an open browser page (Debian's chromium, following the SSE stream). No Docker needed.
import { serve } from '@hono/node-server';
import { chromium } from 'playwright-core';
import { Bus } from '../src/controller/bus.js';
import { ASSETS } from '../src/ui/assets.js';

import { addDeployEvent, createDeploy, updateDeploy } from '../src/store/deploys.js';

import { createTestApi } from '../test/support/api.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/browser.js';
import { loadAvg, log, numFlag, pct, runMain } from './common.js';
import { createApp, setEnv } from '../test/support/commands.js';
import { observeApp } from '../src/observed/apps.js';

const STEPS = ['start', 'pull', 'start', 'health_check', 'route_update', 'stop_old', 'finalize'];

/** A daemon's API and UI on :memory: with `n` apps, each with 3 finished deploys (7 events) and 3 variables. */
async function seeded(n: number, bus?: Bus) {
  const t = createTestApi({ bus });
  const { cookie } = await t.login();
  const noop = () => {};
  t.db.$client.transaction(() => {
    for (let i = 0; i < n; i++) {
      const app = createApp(t.db, noop, { name: `bench-${i}`, imageRef: `registry.local/bench-${i}:v1`, fallbackPort: 20000 + i }, 'rest');
      let last = 0;
      for (let k = 1; k <= 3; k++) {
        const d = createDeploy(t.db, noop, undefined, { appId: app.id, appName: app.name, imageRef: `registry.local/bench-${i}:v${k}`, trigger: 'manual' });
        for (const step of STEPS) addDeployEvent(t.db, undefined, d.id, step, `${step} of deploy ${d.id}`);
        updateDeploy(t.db, undefined, d.id, { status: 'success', startedAt: d.createdAt, completedAt: d.createdAt, envDiff: { added: ['A'], removed: [], changed: [] } });
        last = d.id;
      }
      for (const key of ['DATABASE_URL', 'MODE', 'API_KEY']) setEnv(t.db, t.sealer, noop, app.id, { key, value: `value-of-${key}`, isSecret: key === 'API_KEY' }, 'bench');
      observeApp(t.db, app.id, { status: 'active', liveDeployId: last, liveContainerName: `svc-bench-${i}-${last}` });
    }
  })();
  return { t, cookie };
}

async function renderTimes(t: Awaited<ReturnType<typeof seeded>>['t'], cookie: string, path: string, runs: number) {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs + 5; i++) {
    const t0 = performance.now();
    const res = await t.app.request(path, { headers: { cookie: `session=${cookie}` } });
    const html = await res.text();
    const dt = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    if (i >= 5) times.push(dt); // the first renders warm up the JIT and SQLite's statement cache
    bytes = Buffer.byteLength(html);
  }
  return { p50: pct(times, 50), p99: pct(times, 99), bytes };
}

const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;

async function liveLatency(samples: number) {
  const bus = new Bus();
  const { t, cookie } = await seeded(5, bus);
  const app = createApp(t.db, () => {}, { name: 'bench-live', imageRef: 'registry.local/live:v1', fallbackPort: 21000 }, 'rest');
  const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as { port: number }).port;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS.filter((a) => a !== '--no-first-run') });
  try {
    const ctx = await browser.newContext();
    await ctx.addCookies([{ name: 'session', value: cookie, url: `http://127.0.0.1:${port}` }]);
    const page = await ctx.newPage();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const d = createDeploy(t.db, () => {}, bus, { appId: app.id, appName: app.name, imageRef: `registry.local/live:v${i}`, trigger: 'manual' });
      updateDeploy(t.db, bus, d.id, { status: 'running' });
      addDeployEvent(t.db, bus, d.id, 'start', 'deploy started');
      await page.goto(`http://127.0.0.1:${port}/deploys/${d.id}`);
      // Wait until the page follows the stream (an event written now arrives through it, not the render).
      const probe = `probe-${i}`;
      addDeployEvent(t.db, bus, d.id, 'pull', probe);
      await page.getByText(probe).waitFor();
      const marker = `route switched ${i}`;
      const t0 = performance.now();
      addDeployEvent(t.db, bus, d.id, 'route_update', marker);
      await page.waitForFunction((m) => document.body.innerText.includes(m), marker, { polling: 'raf' });
      times.push(performance.now() - t0);
      updateDeploy(t.db, bus, d.id, { status: 'success' });
    }
    return { p50: pct(times, 50), p99: pct(times, 99), max: Math.max(...times) };
  } finally {
    await browser.close();
    server.close();
  }
}

/** The app's pages: the one page before issue 34, its tabs after (a 404 is a tab that does not exist). */
const APP_PATHS = ['', '/deploys', '/logs', '/env', '/services', '/jobs', '/metrics', '/terminal', '/previews', '/settings'];

/** Height (px, 1200x900 viewport, JavaScript off so no live content) and HTML bytes of each app page. */
async function pageHeights() {
  const { t, cookie } = await seeded(5);
  const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as { port: number }).port;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS.filter((a) => a !== '--no-first-run') });
  try {
    const ctx = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 900 } });
    await ctx.addCookies([{ name: 'session', value: cookie, url: `http://127.0.0.1:${port}` }]);
    const page = await ctx.newPage();
    const rows: string[] = [];
    for (const tail of APP_PATHS) {
      const res = await page.goto(`http://127.0.0.1:${port}/apps/1${tail}`);
      if (!res || res.status() !== 200) continue;
      const bytes = Buffer.byteLength(await res.text());
      const h = await page.evaluate(() => document.documentElement.scrollHeight);
      rows.push(`/apps/{id}${tail} ${h} px ${kb(bytes)}`);
    }
    return rows;
  } finally {
    await browser.close();
    server.close();
  }
}

runMain(async () => {
  const runs = numFlag('runs', 100, 10, 1000);
  log(`bench:ui (${await loadAvg()})`);
  for (const n of [50, 1000]) {
    const { t, cookie } = await seeded(n);
    const dash = await renderTimes(t, cookie, '/', n > 100 ? Math.min(runs, 30) : runs);
    const appPage = await renderTimes(t, cookie, '/apps/1', runs);
    console.log(`${n} apps: GET / p50 ${dash.p50.toFixed(1)} ms p99 ${dash.p99.toFixed(1)} ms (${kb(dash.bytes)} HTML); GET /apps/{id} p50 ${appPage.p50.toFixed(1)} ms p99 ${appPage.p99.toFixed(1)} ms (${kb(appPage.bytes)} HTML)`);
    if (n === 50) {
      const css = Buffer.byteLength(await ASSETS.style.body());
      const js = Buffer.byteLength(await ASSETS.script.body());
      const assets = css + js;
      console.log(`page weight, uncompressed: CSS ${kb(css)} + JS ${kb(js)}; dashboard (50 apps) ${kb(dash.bytes + assets)}, app page ${kb(appPage.bytes + assets)} (no fonts or images)`);
    }
  }
  console.log(`app pages (height at 1200x900 without JavaScript, HTML): ${(await pageHeights()).join('; ')}`);
  const samples = numFlag('samples', 20, 3, 200);
  const live = await liveLatency(samples);
  console.log(`route_update written to the database -> text in an open page: p50 ${live.p50.toFixed(1)} ms p99 ${live.p99.toFixed(1)} ms max ${live.max.toFixed(1)} ms (${samples} deploys)`);
});
