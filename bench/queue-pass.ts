// What a periodic pass costs the daemon's CPU when it goes through the work queue (a `periodic()` key:
// certs:watch, notify:outbox, disk:data) against the hand-made equivalent it replaced (a self-rescheduling
// setTimeout), both running the same empty pass. Each runs in its own child process with npm start's node
// flags (V8's optimising compilers off, as the daemon runs), one after the other in alternation, and the
// child reports its own CPU (process.cpuUsage) over `--passes` passes 1 ms apart. Prints figures; not a test.
//
//   npm run bench:queue-pass -- [--passes 5000] [--rounds 3]
//
// Read with bench:idle: the idle daemon runs about 33 such passes a minute (certs:watch every 3 s,
// notify:outbox every 5 s, disk:data every minute), so (queue - timer) x 33 is what the queue adds a minute.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadAvg, log, numFlag, runMain, startEnv, startFlags } from './common.js';
import { createWorkQueue } from '../src/controller/workqueue.js';
import { periodic } from '../src/controller/periodic.js';

const run = promisify(execFile);
const PASSES = numFlag('passes', 5_000, 100, 100_000);
const ROUNDS = numFlag('rounds', 3, 1, 10);

/** In a child: `passes` empty passes through the queue (or a timer loop), then its CPU in microseconds. */
async function child(mode: 'queue' | 'timer', passes: number): Promise<void> {
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  const pass = () => {
    if (++done === passes) finish();
  };
  const warm = 200; // the first passes load and compile; not counted
  let from = process.cpuUsage();
  const counting = () => {
    if (done === warm) from = process.cpuUsage();
  };
  // The queue's timers are unref'd (the daemon's server keeps it alive); here an interval does.
  const alive = setInterval(() => {}, 1_000);
  if (mode === 'queue') {
    const r = periodic({ kind: 'certs', name: 'watch', periodMs: 1, pass: () => (pass(), counting()) });
    const q = createWorkQueue({ handler: async (key) => r.reconcile(key.slice(key.indexOf(':') + 1)) });
    q.add('certs:watch');
    await finished;
    const used = process.cpuUsage(from);
    await q.stop();
    process.stdout.write(JSON.stringify({ us: used.user + used.system, passes: passes - warm }));
  } else {
    const tick = () => {
      pass();
      counting();
      if (done < passes) setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
    await finished;
    const used = process.cpuUsage(from);
    process.stdout.write(JSON.stringify({ us: used.user + used.system, passes: passes - warm }));
  }
  clearInterval(alive);
}

async function main() {
  const figures: Record<'queue' | 'timer', number[]> = { queue: [], timer: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of round % 2 ? (['queue', 'timer'] as const) : (['timer', 'queue'] as const)) {
      const { stdout } = await run(process.execPath, [...startFlags(), '--import', 'tsx', 'bench/queue-pass.ts', '--child', mode, '--passes', String(PASSES)], {
        env: { ...process.env, ...startEnv() },
        timeout: 300_000,
      });
      const r = JSON.parse(stdout) as { us: number; passes: number };
      figures[mode].push(r.us / r.passes);
      log(`round ${round} ${mode}: ${(r.us / r.passes).toFixed(1)} us of CPU per pass (${r.passes} passes)`);
    }
  }
  const f = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(', ');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const extra = median(figures.queue) - median(figures.timer);
  console.log(`\nCPU per empty periodic pass, npm start's node flags (${startFlags().join(' ')}), ${await loadAvg()}`);
  console.log('| figure | work queue (periodic key) | setTimeout loop (by hand) |');
  console.log('|---|---|---|');
  console.log(`| us of CPU per pass, rounds | ${f(figures.queue)} | ${f(figures.timer)} |`);
  console.log(`| median | ${median(figures.queue).toFixed(1)} | ${median(figures.timer).toFixed(1)} |`);
  console.log(`\nThe queue adds ${extra.toFixed(1)} us a pass: ${((extra * 33) / 10_000).toFixed(2)} ticks (10 ms) a minute at the idle daemon's 33 periodic passes a minute.`);
}

const at = process.argv.indexOf('--child');
if (at >= 0) void child(process.argv[at + 1] === 'timer' ? 'timer' : 'queue', PASSES);
else runMain(main);
