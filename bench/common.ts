// Shared pieces of the app benchmarks (deploy latency, zero downtime, heal, idle): flags, percentiles,
// a bounded keep-alive load generator against a loopback port, a deploy-event SSE reader that
// timestamps arrivals, and small HTTP helpers. Benchmarks print figures; none of this is a test.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const log = (msg: string) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${msg}\n`);

/** `--name value` from argv, clamped to [min, max]. */
export function numFlag(name: string, fallback: number, min: number, max: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  return Number.isFinite(v) ? Math.min(Math.max(v, min), max) : fallback;
}

const startWords = () => ((JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '').split(/\s+/);

/** The node flags of package.json's `start` script (what `npm start` runs the daemon with). */
export function startFlags(): string[] {
  const words = startWords();
  const from = words.indexOf('node');
  const to = words.indexOf('dist/cli.js');
  return from >= 0 && to > from ? words.slice(from + 1, to).filter((w) => w.startsWith('--')) : [];
}

/** The `NAME=value` assignments before `node` in package.json's `start` script (MALLOC_ARENA_MAX=2): a daemon a bench starts runs as `npm start` would. */
export function startEnv(): Record<string, string> {
  const words = startWords();
  const to = words.indexOf('node');
  return Object.fromEntries(words.slice(0, Math.max(0, to)).flatMap((w) => (/^[A-Z_][A-Z0-9_]*=/.test(w) ? [w.split(/=(.*)/s).slice(0, 2)] : [])));
}

/** Nearest-rank percentile of `xs` (p in 0..100). */
export function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export const ms = (x: number) => `${Math.round(x)} ms`;

/** Polls every `everyMs` (bounded) until `ok()` (a throw counts as not yet); the ms it took. */
export async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 90_000, everyMs = 50): Promise<number> {
  const t0 = performance.now();
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await ok().catch(() => false)) return performance.now() - t0;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * `loads` config loads (`load(i)`, i from 1) one every 50-100 ms, half a second of load before and after:
 * the reload storms of bench:relay-reloads and bench:edge-node-reloads. The ms each load took.
 */
export async function reloadStorm(loads: number, load: (i: number) => Promise<void>): Promise<number[]> {
  const waits: number[] = [];
  await sleep(500);
  for (let i = 1; i <= loads; i++) {
    const t0 = performance.now();
    await load(i);
    waits.push(performance.now() - t0);
    await sleep(50 + Math.random() * 50);
  }
  await sleep(500);
  return waits;
}
export const secs = (x: number) => `${(x / 1000).toFixed(2)} s`;

/** The 1/5/15 min load averages, for the report (the machine is shared). */
export async function loadAvg(): Promise<string> {
  const { loadavg, cpus } = await import('node:os');
  return `load ${loadavg().map((l) => l.toFixed(2)).join(' ')} on ${cpus().length} cores`;
}

/** Status code of one GET (fresh connection), or undefined on error/timeout. */
export function httpStatus(url: string, timeoutMs = 1000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** GET body text (fresh connection), or undefined. */
export function httpText(url: string, timeoutMs = 2000): Promise<{ status: number; text: string } | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/**
 * Wall time (Date.now()) of the first answer through `port` whose body `ok` accepts. A fresh GET is sent
 * every 25 ms without waiting for earlier ones: Caddy holds a request while it retries a dead upstream,
 * so probing one at a time would measure the probe's own timeout rather than the moment service is back.
 */
export function firstAnswer(port: number, ok: (r: { status: number; text: string }) => boolean, maxMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let done = false;
    const began = Date.now();
    const tick = setInterval(() => {
      if (done) return;
      if (Date.now() - began > maxMs) {
        done = true;
        clearInterval(tick);
        reject(new Error(`no good answer on port ${port} within ${maxMs} ms`));
        return;
      }
      void httpText(`http://127.0.0.1:${port}/`, 6_000).then((r) => {
        if (!done && r && ok(r)) {
          done = true;
          clearInterval(tick);
          resolve(Date.now());
        }
      });
    }, 25);
  });
}

// ---------------------------------------------------------------------------------------------------
// Load generator

export interface LoadStats {
  total: number;
  ok: number;
  non2xx: Map<string, number>;
  connErrors: Map<string, number>;
  latencies: number[];
  /** Date.now() and kind of each failure (non-2xx or connection error), the first MAX_FAILURES only. */
  failures: { at: number; what: string }[];
  /** Requests that took SLOW_MS or more, answered or not: Date.now() when sent, how long, kind. */
  slow: { sentAt: number; ms: number; what: string }[];
}

/** What `LoadStats.slow` counts as slow. */
export const SLOW_MS = 1000;

export interface Load {
  stats: LoadStats;
  stop(): Promise<void>;
}

const MAX_REQUESTS_PER_CLIENT = 5_000_000;
const MAX_LATENCIES = 5_000_000;
const MAX_FAILURES = 100_000;

/**
 * `clients` keep-alive clients (one socket each), each alternating GET / and POST /cgi-bin/echo to
 * 127.0.0.1:port until stop(), a hard deadline (`maxMs`) or a request count. Non-2xx responses and
 * connection errors (resets, refused, timeouts) are counted apart.
 */
/**
 * `host`: where the listener is (default loopback; an edge node's address in its network namespace).
 * `postBytes`: the POSTs' body size (default 3): a larger body widens the window in which an app that answers
 * before reading it (the test app's CGI does) races the proxy still writing it (past ~4 KB the test app's
 * busybox closes with unread data: resets of its own). `postDelayMs`: a slow upload, the POSTs' headers sent
 * first and the body a random 0..postDelayMs later: the host's write of the body then lands at any point of
 * the upstream's answer, where the race lies (a write that fails before the answer is read fails the request).
 */
export function startLoad(port: number, opts: { clients?: number; maxMs: number; timeoutMs?: number; host?: string; postBytes?: number; postDelayMs?: number }): Load {
  const clients = opts.clients ?? 16;
  const deadline = Date.now() + opts.maxMs;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const postBody = opts.postBytes ? `x=${'1'.repeat(Math.max(1, opts.postBytes - 2))}` : 'x=1';
  const stats: LoadStats = { total: 0, ok: 0, non2xx: new Map(), connErrors: new Map(), latencies: [], failures: [], slow: [] };
  let stopped = false;
  const bump = (m: Map<string, number>, k: string) => {
    m.set(k, (m.get(k) ?? 0) + 1);
    if (stats.failures.length < MAX_FAILURES) stats.failures.push({ at: Date.now(), what: k });
  };

  const one = async (i: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let n = 0; n < MAX_REQUESTS_PER_CLIENT && !stopped && Date.now() < deadline; n++) {
        const post = (n + i) % 2 === 1;
        const what = post ? 'POST' : 'GET';
        const t0 = performance.now();
        const sentAt = Date.now();
        await new Promise<void>((resolve) => {
          let done = false;
          const finish = (f: () => void) => {
            if (done) return;
            done = true;
            stats.total++;
            const took = performance.now() - t0;
            if (took >= SLOW_MS && stats.slow.length < MAX_FAILURES) stats.slow.push({ sentAt, ms: took, what });
            f();
            resolve();
          };
          const req = request(
            {
              host: opts.host ?? '127.0.0.1',
              port,
              agent,
              method: what,
              path: post ? '/cgi-bin/echo' : '/',
              timeout: timeoutMs,
              headers: post ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(postBody)) } : {},
            },
            (res) => {
              res.resume();
              res.on('end', () =>
                finish(() => {
                  const s = res.statusCode ?? 0;
                  if (s >= 200 && s < 300) stats.ok++;
                  else bump(stats.non2xx, `${what} ${s}`);
                  if (stats.latencies.length < MAX_LATENCIES) stats.latencies.push(performance.now() - t0);
                }),
              );
              res.on('error', (err: NodeJS.ErrnoException) => finish(() => bump(stats.connErrors, `${what} ${err.code ?? err.message}`)));
            },
          );
          req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
          req.on('error', (err: NodeJS.ErrnoException) => finish(() => bump(stats.connErrors, `${what} ${err.code ?? err.message}`)));
          if (post && opts.postDelayMs) {
            req.flushHeaders();
            setTimeout(() => req.end(postBody), Math.random() * opts.postDelayMs);
          } else req.end(post ? postBody : undefined);
        });
      }
    } finally {
      agent.destroy();
    }
  };

  const running = Promise.all(Array.from({ length: clients }, (_, i) => one(i)));
  return {
    stats,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

export function formatCounts(m: Map<string, number>): string {
  const parts = [...m.entries()].map(([k, v]) => `${k} x${v}`);
  return parts.length ? parts.join(', ') : 'none';
}

// ---------------------------------------------------------------------------------------------------
// Deploy events over SSE, with arrival times

export interface TimedEvent {
  /** performance.now() when the event arrived. */
  at: number;
  step: string;
  level: string;
  message: string;
}

export interface DeployTrace {
  events: TimedEvent[];
  /** performance.now() when `done` arrived, and the final status it named. */
  doneAt: number;
  status: string;
}

/**
 * Follows GET /api/deploys/{id}/events/stream until `done` (or `timeoutMs`), timestamping each event's
 * arrival. The stream replays earlier events first, so opening it right after the POST loses nothing
 * (replayed ones just get the arrival time of the replay).
 */
export async function traceDeploy(baseUrl: string, token: string, deployId: number, timeoutMs: number): Promise<DeployTrace> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  const events: TimedEvent[] = [];
  try {
    const res = await fetch(`${baseUrl}/api/deploys/${deployId}/events/stream`, { headers: { authorization: `Bearer ${token}` }, signal: ctrl.signal });
    if (!res.ok || !res.body) throw new Error(`event stream of deploy ${deployId}: HTTP ${res.status}`);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`event stream of deploy ${deployId} ended without done`);
      const now = performance.now();
      buf += dec.decode(value, { stream: true });
      let idx: number;
      while ((idx = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, idx);
        buf = buf.slice(idx + 2);
        const ev = /^event: (.*)$/m.exec(block)?.[1];
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (ev === 'deploy_event') {
          const e = JSON.parse(data) as { step: string; level: string; message: string };
          events.push({ at: now, step: e.step, level: e.level, message: e.message });
        } else if (ev === 'done') {
          ctrl.abort();
          return { events, doneAt: now, status: (JSON.parse(data) as { status: string }).status };
        }
      }
    }
  } finally {
    clearTimeout(timer);
    ctrl.abort();
  }
}

/** The parts of a test daemon a deploy needs (test/support/daemon.ts's TestDaemon has them). */
export interface DeployTarget {
  url: string;
  token: string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** Deploys `image` to app `appId` through the API and waits for the deploy's outcome; anything but success throws. */
export async function deployAndWait(t: DeployTarget, appId: number, image: string, timeoutMs: number): Promise<DeployTrace> {
  const res = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  const trace = await traceDeploy(t.url, t.token, res.body.id as number, timeoutMs);
  if (trace.status !== 'success') throw new Error(`deploy ${res.body.id} ended ${trace.status}: ${JSON.stringify(trace.events.at(-1))}`);
  return trace;
}

/** Waits (bounded) until GET / on the loopback `port` answers 200 with `needle` in its body. */
export async function waitServed(port: number, needle: string, maxMs = 15_000): Promise<void> {
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    const r = await httpText(`http://127.0.0.1:${port}/`, 2000);
    if (r?.status === 200 && r.text.includes(needle)) return;
    await sleep(50);
  }
  throw new Error(`port ${port} did not serve ${needle} within ${maxMs / 1000} s`);
}

/** Runs a benchmark's main and exits with its outcome (detached responders and timers must not keep it alive). */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps: per mapped file (the node binary, native
 * addons, shared libraries), `[heap]` (malloc's main arena), `[anon]` (V8's heap, other malloc arenas,
 * thread stacks) and `[stack]`, in KiB, largest first. For --mem-breakdown figures.
 */
export function smapsBreakdown(pid: number, top = 8): string {
  const byMapping = new Map<string, number>();
  let current = '[anon]';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      const name = line.split(/\s+/).slice(5).join(' ');
      current = name ? (name.startsWith('/') ? name.split('/').pop()! : name) : '[anon]';
    } else if (line.startsWith('Rss:')) {
      byMapping.set(current, (byMapping.get(current) ?? 0) + Number(line.split(/\s+/)[1]));
    }
  }
  return [...byMapping.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k} ${(v / 1024).toFixed(1)}`)
    .join(', ');
}

/** A plain JSON call to a daemon's API: status, parsed body and headers. */
export async function rawApi(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** Creates the first admin of a fresh daemon and an API token for the bench: the token. */
export async function benchToken(url: string): Promise<string> {
  const setup = await rawApi(url, 'POST', '/api/auth/setup', { username: 'admin', password: 'correct horse battery' });
  const cookie = setup.headers.get('set-cookie')?.split(';')[0] ?? '';
  const tok = await rawApi(url, 'POST', '/api/tokens', { name: 'bench' }, { cookie });
  if (tok.status !== 201) throw new Error(`token: ${tok.status} ${JSON.stringify(tok.body)}`);
  return tok.body.token as string;
}
