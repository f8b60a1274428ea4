// How fast svc heals an app and a managed service whose network was removed behind its back (issue 35,
// defect 6), paired with the case it should match: the same two containers only stopped (`docker stop`).
// Both happen while no svc runs (with svc running, a stop is healed before a removal could follow), so each
// round stops the daemon, stops the app's and the Redis's containers (and in the `network` arm removes the
// instance's network), starts the daemon again and times, from the daemon's start, the app answering 200
// through its port and the service `active` in the API. Arms alternate round by round. Prints figures; not a
// test.
//
//   npm run bench:network-gone -- [--rounds 3]
//
// Traffic goes only to loopback and the containers it made; every wait is bounded; the daemon, its
// containers, its network and its data directory are removed at the end, even on error.
import { silentLogger } from '../src/log.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { LABELS } from '../src/runtime/runtime.js';
import { freePort } from '../test/support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_PORT, WEB_V1 } from '../test/support/images.js';
import { ensureServiceImages, serviceImageEnv } from '../test/support/service-images.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, numFlag, pct, runMain } from './common.js';

const ROUNDS = numFlag('rounds', 3, 1, 10);
const runtime = createDockerRuntime({ log: silentLogger });

const served = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
};

async function main() {
  await Promise.all([ensureTestImages(runtime), ensureServiceImages()]);
  let t: TestDaemon | undefined;
  try {
    t = await startTestDaemon('netgonebench', serviceImageEnv());
    const svc = await t.api('POST', '/api/services', { name: 'cache', type: 'redis' });
    const port = await freePort();
    const app = await t.api('POST', '/api/apps', { name: 'netgone', internal_port: WEB_PORT, access_mode: 'port', fallback_port: port });
    const d = await t.api('POST', `/api/apps/${app.body.id}/deploys`, { image_ref: WEB_V1 });
    await waitFor(async () => (await t!.api('GET', `/api/deploys/${d.body.id}`)).body.status === 'success', { timeoutMs: 120_000, what: 'deploy' });
    await waitFor(async () => (await t!.api('GET', `/api/services/${svc.body.id}`)).body.status === 'active', { timeoutMs: 180_000, what: 'service active' });
    const figures = { stop: { app: [] as number[], service: [] as number[] }, network: { app: [] as number[], service: [] as number[] } };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const arm of round % 2 ? (['network', 'stop'] as const) : (['stop', 'network'] as const)) {
        const ours = (await runtime.list({ [LABELS.instance]: t.instance })).filter((c) => c.labels[LABELS.role] === 'app' || c.labels[LABELS.role] === 'service');
        let from = 0;
        await t.restart(async () => {
          for (const c of ours) if (c.running) await runtime.docker.getContainer(c.id).stop({ t: 1 }).catch((err: { statusCode?: number }) => { if (err.statusCode !== 304) throw err; });
          if (arm === 'network') await runtime.docker.getNetwork(t!.network).remove();
          from = Date.now();
        });
        await waitFor(() => served(port).catch(() => false), { timeoutMs: 60_000, intervalMs: 25, what: 'the app serving again' });
        const appMs = Date.now() - from;
        await waitFor(async () => (await t!.api('GET', `/api/services/${svc.body.id}`)).body.status === 'active', { timeoutMs: 60_000, intervalMs: 25, what: 'the service active again' });
        const serviceMs = Date.now() - from;
        figures[arm].app.push(appMs);
        figures[arm].service.push(serviceMs);
        log(`round ${round} ${arm}: app serving after ${appMs} ms, service active after ${serviceMs} ms (${await loadAvg()})`);
      }
    }
    const row = (xs: number[]) => `${xs.join(', ')} (p50 ${pct(xs, 50)})`;
    console.log(`\nFrom the daemon's start (containers stopped while it was down), ${ROUNDS} rounds, ${await loadAvg()}`);
    console.log('| figure | network removed too | only stopped (`docker stop`) |');
    console.log('|---|---|---|');
    console.log(`| app serving again, ms | ${row(figures.network.app)} | ${row(figures.stop.app)} |`);
    console.log(`| Redis active again, ms | ${row(figures.network.service)} | ${row(figures.stop.service)} |`);
  } finally {
    await t?.close();
  }
}

runMain(main);
