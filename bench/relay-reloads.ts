// The Swarm edge's reload race, on demand (issue 19, docs/decisions/0039-two-relays-swapped.md): POST clients
// through a real host Caddy and svc's real edge relays (the proxy image, containers on a bridge network of
// this engine, the same code the daemon runs: createEdgeRelays + relayedEdge) to the test app, whose CGI
// answers before reading the body, while the relays get many config loads (new DNS answers of an unused app,
// the path of a switch). Rounds alternate the baseline (`relays 1`: every load reloads the relay carrying
// the traffic, as before) and the pair (`relays 2`: loaded while standby, then swapped). Prints, per round,
// requests, failures, the host Caddy's error lines by message, and how long each load (a switch's wait) took.
//
//   npm run bench:relay-reloads -- [--loads 200] [--clients 16] [--body 3] [--post-delay 10] [--rounds 2] [--only 0|1|2]
//
// No cluster (test/support/relay-rig.ts): the race is between the host's Caddy, the unix socket and the relay's reload, not the
// overlay. Traffic goes only to loopback and to containers it started; every loop is bounded; the
// containers, network, Caddy and temp dir are removed at the end, even on error.
import { ensureCaddyImage } from '../test/support/caddy-image.js';
import { ensureTestImages } from '../test/support/images.js';
import { startRelayRig } from '../test/support/relay-rig.js';
import { formatCounts, loadAvg, log, ms, numFlag, pct, runMain, startLoad, waitServed, reloadStorm } from './common.js';

const LOADS = numFlag('loads', 200, 1, 1000);
const CLIENTS = numFlag('clients', 16, 1, 64);
const BODY = numFlag('body', 3, 3, 1 << 20);
/** A slow upload: each POST's body a random 0..this many ms after its headers (0: at once). */
const DELAY = numFlag('post-delay', 10, 0, 1000);
const ROUNDS = numFlag('rounds', 2, 1, 10);
/** 1 or 2: only that variant (0: both, alternated). */
const ONLY = numFlag('only', 0, 0, 2);

async function round(relays: 1 | 2): Promise<string> {
  const rig = await startRelayRig({ relays });
  try {
    await waitServed(rig.port, 'v1', 15_000);
    const load = startLoad(rig.port, { clients: CLIENTS, maxMs: LOADS * 2_000 + 30_000, postBytes: BODY, postDelayMs: DELAY });
    let waits: number[];
    try {
      waits = await reloadStorm(LOADS, (i) => rig.edge.writeDns(rig.recordsAt(i)));
    } finally {
      await load.stop();
    }
    const s = load.stats;
    const errs = new Map<string, number>();
    const examples = new Map<string, string>();
    for (const l of rig.caddy.output().split('\n').filter((x) => /"level":"(error|warn)"/.test(x) && !x.includes('automatic HTTPS'))) {
      const k = (/"error":"([^"]*)"/.exec(l)?.[1] ?? /"msg":"([^"]*)"/.exec(l)?.[1] ?? '?').replace(/unix\/\S+?:/g, 'unix:').replace(/->[^ ]+/g, '');
      errs.set(k, (errs.get(k) ?? 0) + 1);
      if (!examples.has(k)) examples.set(k, l.slice(0, 700));
    }
    return (
      `relays ${relays}: ${LOADS} loads, ${CLIENTS} clients, POST body ${BODY} B 0-${DELAY} ms after its headers: ${s.total} requests, ${s.total - s.ok} failed; ` +
      `non-2xx ${formatCounts(s.non2xx)}; errors ${formatCounts(s.connErrors)}; load wait p50 ${ms(pct(waits, 50))} p95 ${ms(pct(waits, 95))} max ${ms(Math.max(...waits))}; ` +
      `host Caddy error lines ${formatCounts(errs)} (${await loadAvg()})` +
      [...examples.values()].map((l) => `\n  e.g. ${l}`).join('')
    );
  } finally {
    await rig.close();
  }
}

async function main() {
  await Promise.all([ensureTestImages(), ensureCaddyImage()]);
  log(`start (${await loadAvg()})`);
  const variants: (1 | 2)[] = ONLY === 1 ? [1] : ONLY === 2 ? [2] : [1, 2];
  for (let r = 1; r <= ROUNDS; r++) {
    for (const v of variants) {
      const line = await round(v);
      console.log(`round ${r}: ${line}`);
    }
  }
}
runMain(main);
