// Long-lived connections across deploys (issue 37), through the whole daemon (real engine, host Caddy, DNS
// responder): CLIENTS WebSocket clients of the stream app (test/support/stream-images.ts) through Caddy,
// DEPLOYS deploys of that app (v1 and v2 in turn), drain_seconds DRAIN. After each deploy MOVE clients close
// (cleanly, from the client) and open again, so they land on the new version: the old versions each keep
// some clients and drain side by side. Counted per client: cut early (closed by the server before the drain
// of its version ended: the goal is 0), cut at the drain's end (expected), new connections that reached the
// version just deployed. Measured: memory of the draining old versions while they wait (docker stats).
// Paired with what svc did before (drain_seconds 0: the old version is stopped once Caddy re-resolved,
// whatever it has open) in a short first phase on the same app.
//
//   npm run bench:streams -- [--clients 200] [--deploys 20] [--drain 60] [--move 10] [--baseline 3]
//
// Traffic goes only to loopback; every loop is bounded; everything it created is removed at the end.
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { silentLogger } from '../src/log.js';
import { createDockerRuntime } from '../src/runtime/docker.js';
import { LABELS } from '../src/runtime/runtime.js';
import { freePort } from '../test/support/caddy.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureStreamImages, STREAM_PORT, STREAM_V1, STREAM_V2 } from '../test/support/stream-images.js';
import { loadAvg, log, numFlag, runMain, sleep } from './common.js';

const CLIENTS = numFlag('clients', 200, 1, 1000);
const DEPLOYS = numFlag('deploys', 20, 1, 50);
const DRAIN_S = numFlag('drain', 60, 1, 600);
const MOVE = numFlag('move', 10, 0, 1000);
const BASELINE = numFlag('baseline', 3, 0, 10);
const runtime = createDockerRuntime({ log: silentLogger });

interface Client {
  ws: WebSocket;
  version: string;
  /** Set by us before we close it: not a cut. */
  leaving?: boolean;
  /** The deploy whose switch made its version drain. */
  drainedBy?: number;
  closedAt?: number;
}

async function connect(port: number): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const c: Client = { ws, version: '' };
  ws.on('close', () => (c.closedAt ??= Date.now()));
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no WebSocket within 5 s')), 5_000);
    ws.once('open', () => ws.send('hello'));
    ws.once('message', (m) => {
      clearTimeout(timer);
      c.version = m.toString().split(' ')[0];
      resolve();
    });
    ws.once('close', () => reject(new Error('closed before its first echo')));
  });
  return c;
}

async function deploy(t: TestDaemon, appId: number, image: string): Promise<{ id: number; drainUntil: number | undefined }> {
  const res = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    const d = (await t.api('GET', `/api/deploys/${res.body.id}`)).body;
    if (d.status === 'success') return { id: d.id, drainUntil: d.drain_until ? Date.parse(d.drain_until) : undefined };
    if (['failed', 'auto_rollback', 'cancelled'].includes(d.status)) throw new Error(`deploy ${d.id} ${d.status}: ${d.error}`);
    await sleep(50);
  }
  throw new Error('deploy did not succeed within 120 s');
}

/** Resident memory (MiB) of these containers, from one `docker stats` read. */
function memoryMiB(names: string[]): Map<string, number> {
  if (names.length === 0) return new Map();
  const out = execFileSync('docker', ['stats', '--no-stream', '--format', '{{.Name}} {{.MemUsage}}', ...names], { encoding: 'utf8' });
  const unit: Record<string, number> = { B: 1 / 1048576, KiB: 1 / 1024, MiB: 1, GiB: 1024 };
  const m = new Map<string, number>();
  for (const line of out.trim().split('\n')) {
    const [name, used] = line.split(' ');
    const x = /^([\d.]+)([A-Za-z]+)$/.exec(used ?? '');
    if (name && x) m.set(name, Number(x[1]) * (unit[x[2]] ?? NaN));
  }
  return m;
}

/** One phase: CLIENTS clients, `deploys` deploys; what happened to the clients. */
async function phase(t: TestDaemon, app: { id: number; port: number; name: string }, deploys: number, drainS: number, measureMemory: boolean) {
  await t.api('PUT', `/api/apps/${app.id}`, { drain_seconds: drainS });
  let image = STREAM_V1;
  await deploy(t, app.id, image);
  const clients: Client[] = [];
  for (let i = 0; i < CLIENTS; i += 20) clients.push(...(await Promise.all(Array.from({ length: Math.min(20, CLIENTS - i) }, () => connect(app.port)))));
  const drainUntil = new Map<number, number>();
  let fresh = 0;
  let freshOnNew = 0;
  let peak = { versions: 0, mib: 0, perVersion: [] as number[], live: 0 };
  for (let n = 0; n < deploys; n++) {
    image = image === STREAM_V1 ? STREAM_V2 : STREAM_V1;
    const want = image === STREAM_V1 ? 'v1' : 'v2';
    const d = await deploy(t, app.id, image);
    if (d.drainUntil) drainUntil.set(d.id, d.drainUntil);
    for (const c of clients) if (c.drainedBy === undefined && c.closedAt === undefined) c.drainedBy = d.id;
    // MOVE clients leave (their own close) and come back: on the new version at once?
    const movers = clients.filter((c) => c.closedAt === undefined && !c.leaving).slice(0, MOVE);
    for (const c of movers) {
      c.leaving = true;
      c.ws.close(1000);
    }
    const back = await Promise.all(movers.map(() => connect(app.port).catch(() => undefined)));
    for (const c of back) {
      fresh++;
      if (c) {
        clients.push(c);
        if (c.version === want) freshOnNew++;
      }
    }
    if (measureMemory) {
      const ours = await runtime.list({ [LABELS.instance]: t.instance, [LABELS.app]: app.name });
      const running = ours.filter((c) => c.running).map((c) => c.name);
      const live = (await t.api('GET', `/api/apps/${app.id}`)).body.live_container_name as string;
      const mem = memoryMiB(running);
      const old = running.filter((r) => r !== live);
      const total = old.reduce((s, r) => s + (mem.get(r) ?? 0), 0);
      if (old.length >= peak.versions) peak = { versions: old.length, mib: total, perVersion: old.map((r) => mem.get(r) ?? 0), live: mem.get(live) ?? 0 };
    }
    log(`deploy ${n + 1}/${deploys}: ${clients.filter((c) => c.closedAt === undefined).length} open, ${clients.filter((c) => c.closedAt !== undefined && !c.leaving).length} cut so far`);
  }
  // Wait for every drain to end (bounded), then judge each cut.
  const lastEnd = Math.max(Date.now(), ...drainUntil.values());
  const end = lastEnd + 20_000;
  while (Date.now() < end && clients.some((c) => c.drainedBy !== undefined && c.closedAt === undefined && !c.leaving)) await sleep(250);
  let early = 0;
  let atDrainEnd = 0;
  let notCut = 0;
  const lateByMs: number[] = [];
  for (const c of clients) {
    if (c.leaving || c.drainedBy === undefined) continue;
    if (c.closedAt === undefined) {
      notCut++;
      continue;
    }
    const until = drainUntil.get(c.drainedBy);
    if (until === undefined || c.closedAt < until - 50) early++;
    else {
      atDrainEnd++;
      lateByMs.push(c.closedAt - until);
    }
  }
  for (const c of clients) c.ws.terminate();
  return { early, atDrainEnd, notCut, fresh, freshOnNew, peak, lateByMs, drained: early + atDrainEnd + notCut };
}

async function main() {
  await ensureStreamImages(runtime);
  log(`load before: ${await loadAvg()}`);
  const t = await startTestDaemon('bench-streams');
  try {
    const port = await freePort();
    const res = await t.api('POST', '/api/apps', { name: 'bs-ws', internal_port: STREAM_PORT, access_mode: 'port', fallback_port: port, drain_seconds: DRAIN_S });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    const app = { id: res.body.id as number, port, name: 'bs-ws' };
    if (BASELINE > 0) {
      log(`baseline: drain_seconds 0 (stopped once Caddy re-resolved), ${BASELINE} deploys`);
      const b = await phase(t, app, BASELINE, 0, false);
      console.log(`baseline (drain_seconds 0, as before issue 37): ${CLIENTS} clients, ${BASELINE} deploys: ${b.early + b.atDrainEnd} of ${b.drained} clients on a replaced version cut (all at its stop)`);
    }
    log(`streams: drain_seconds ${DRAIN_S}, ${DEPLOYS} deploys`);
    const r = await phase(t, app, DEPLOYS, DRAIN_S, true);
    const late = r.lateByMs.sort((a, b) => a - b);
    console.log(`streams: ${CLIENTS} WebSocket clients, ${DEPLOYS} deploys, drain_seconds ${DRAIN_S}, ${MOVE} clients reconnecting after each deploy`);
    console.log(`  cut early (before their version's drain ended): ${r.early} of ${r.drained}`);
    console.log(`  cut at their drain's end: ${r.atDrainEnd} (after drain_until by p50 ${late[Math.floor(late.length / 2)] ?? '-'} ms, max ${late.at(-1) ?? '-'} ms); never cut: ${r.notCut}`);
    console.log(`  reconnects that reached the version just deployed: ${r.freshOnNew} of ${r.fresh}`);
    console.log(`  draining old versions at the peak: ${r.peak.versions}, ${r.peak.mib.toFixed(1)} MiB in all (each ${r.peak.perVersion.map((x) => x.toFixed(1)).join(', ')} MiB; the live one ${r.peak.live.toFixed(1)} MiB)`);
    console.log(`  load: ${await loadAvg()} (2 cores shared with other helpers' work)`);
  } finally {
    await t.close();
  }
}

runMain(main);
