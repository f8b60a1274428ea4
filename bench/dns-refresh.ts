// What Caddy's DNS refresh of a `dns` route costs under traffic, and what it buys at a switch. A real Caddy
// and svc's DNS responder (dnsmasq), one route built by reverseProxyHandler with its `refresh` set to each
// value in turn, a node upstream in a child process, 8 keep-alive clients for a bounded window. Per value:
// requests/s, Caddy's and dnsmasq's CPU (from /proc, % of one core and µs per request), and the expected
// wait from a change of the answer to Caddy using it (half the refresh). Values alternate over rounds so
// the machine's drift spreads over all of them. Prints figures; not a test.
//
//   npm run bench:dns-refresh -- [--seconds 8] [--rounds 2]
//
// Traffic goes only to loopback; every loop is bounded; Caddy, the responder, the upstream and the temp
// dir are removed at the end, even on error.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reverseProxyHandler } from '../src/proxy/config.js';
import { appDnsName } from '../src/proxy/proxy.js';
import { ensureDnsResponder } from '../src/dns/supervise.js';
import { dnsmasqPaths } from '../src/dns/dnsmasq.js';
import { writeHostsDir } from '../src/dns/hosts.js';
import { stopHelpersOf } from '../src/proxy/detached.js';
import { silentLogger } from '../src/log.js';
import { freePort, startCaddy, type TestCaddy } from '../test/support/caddy.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, numFlag, runMain, startLoad } from './common.js';
import { adminFetch } from '../test/support/admin-fetch.js';

const SECONDS = numFlag('seconds', 8, 2, 60);
const ROUNDS = numFlag('rounds', 2, 1, 10);
const REFRESH_MS = [100, 50, 25];
const UPSTREAM = "require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('ok')); }).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('up'))";

/** utime + stime of a process in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Sample {
  refreshMs: number;
  rps: number;
  caddyPct: number;
  dnsPct: number;
  caddyUsPerReq: number;
  failed: number;
}

async function main() {
  let caddy: TestCaddy | undefined;
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-dns-refresh-'));
  try {
    caddy = await startCaddy();
    const dnsPort = await freePort();
    const upPort = await freePort();
    // The upstream in a process of its own, so the clients' event loop does not also serve it.
    const up = spawn(process.execPath, ['-e', UPSTREAM], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(upPort) }, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise<void>((r, j) => (up.stdout!.once('data', () => r()), up.once('exit', (c) => j(new Error(`upstream exited ${c}`)))));
      const paths = dnsmasqPaths(dir);
      await writeHostsDir(paths.hostsDir, { [appDnsName('web')]: '127.0.0.1' });
      await ensureDnsResponder({ dataDir: dir, port: dnsPort, log: silentLogger });
      const dnsPid = Number((await readFile(paths.pidFile, 'utf8')).trim());
      const listen = await freePort();
      const adminListen = new URL(caddy.adminUrl).host;
      log(`Caddy pid ${caddy.pid}, dnsmasq pid ${dnsPid}; ${SECONDS} s per value, ${ROUNDS} round(s) (${await loadAvg()})`);

      const samples: Sample[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? REFRESH_MS : [...REFRESH_MS].reverse();
        for (const refreshMs of order) {
          const handler = reverseProxyHandler({ kind: 'dns', name: appDnsName('web'), port: upPort }, dnsPort) as { dynamic_upstreams: { refresh: string } };
          handler.dynamic_upstreams.refresh = `${refreshMs}ms`;
          const config = { admin: { listen: adminListen }, apps: { http: { servers: { bench: { listen: [`127.0.0.1:${listen}`], routes: [{ handle: [handler] }], automatic_https: { disable: true } } } } } };
          const res = await adminFetch(`${caddy.adminUrl}/load`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(config) });
          if (!res.ok) throw new Error(`load: ${res.status} ${await res.text()}`);
          await waitFor(async () => (await fetch(`http://127.0.0.1:${listen}/`)).ok, { timeoutMs: 10_000, what: 'route' });
          const c0 = cpuMs(caddy.pid);
          const d0 = cpuMs(dnsPid);
          const t0 = performance.now();
          const load = startLoad(listen, { clients: 8, maxMs: SECONDS * 1000 });
          await new Promise((r) => setTimeout(r, SECONDS * 1000));
          await load.stop();
          const secs = (performance.now() - t0) / 1000;
          const caddyMs = cpuMs(caddy.pid) - c0;
          const dnsMs = cpuMs(dnsPid) - d0;
          const s: Sample = {
            refreshMs,
            rps: load.stats.total / secs,
            caddyPct: caddyMs / 10 / secs,
            dnsPct: dnsMs / 10 / secs,
            caddyUsPerReq: (caddyMs * 1000) / Math.max(1, load.stats.total),
            failed: load.stats.total - load.stats.ok,
          };
          samples.push(s);
          log(`refresh ${refreshMs} ms: ${Math.round(s.rps)} req/s, Caddy ${s.caddyPct.toFixed(1)} % (${s.caddyUsPerReq.toFixed(0)} µs/req), dnsmasq ${s.dnsPct.toFixed(2)} %, failed ${s.failed}`);
        }
      }

      console.log(`\nCaddy's DNS refresh under 8 keep-alive clients, ${SECONDS} s per value, ${ROUNDS} round(s) (${await loadAvg()})`);
      console.log('| refresh | req/s | Caddy CPU, % of a core | Caddy µs per request | dnsmasq CPU, % of a core | lookups/s (at most) | wait for a changed answer (mean) | failed |');
      console.log('|---|---|---|---|---|---|---|---|');
      for (const refreshMs of REFRESH_MS) {
        const xs = samples.filter((s) => s.refreshMs === refreshMs);
        const range = (f: (s: Sample) => number, digits = 0) => {
          const v = xs.map(f);
          const lo = Math.min(...v).toFixed(digits);
          const hi = Math.max(...v).toFixed(digits);
          return lo === hi ? lo : `${lo}-${hi}`;
        };
        console.log(`| ${refreshMs} ms | ${range((s) => s.rps)} | ${range((s) => s.caddyPct, 1)} | ${range((s) => s.caddyUsPerReq)} | ${range((s) => s.dnsPct, 2)} | ${Math.round(1000 / refreshMs)} | ${refreshMs / 2} ms | ${range((s) => s.failed)} |`);
      }
    } finally {
      up.kill();
    }
  } finally {
    await stopHelpersOf(dir).catch(() => undefined);
    await caddy?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

runMain(main);
