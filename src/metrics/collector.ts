// The metrics collector (issue 22): a loop beside the reconcilers, never on a request path. Every 10 s it
// lists this instance's running containers, takes one reading of each (16 at a time), turns them into
// rates against the previous round, sums them per app and service, adds the host, and writes the round in
// one transaction. A stopped container is simply not listed: it gets no new points. It keeps the last round in memory for `svc top` and /metrics.
import type { Clock, TimerHandle } from '../controller/clock.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { writeMetricRound, type MetricValues } from '../store/metrics.js';
import { LABELS } from '../runtime/runtime.js';
import type { ContainerCounters, RunningContainer, StatsSource } from '../runtime/stats.js';
import { roundOf, type ContainerReading, type ContainerValues } from './rates.js';
import { hostValues, readHost, type HostReading } from './host.js';
import { ROUND_SECONDS, TIERS } from './tiers.js';

export const HOST_SUBJECT = 'host';

/** The last round, as `svc top` and the Prometheus endpoint show it. */
export interface MetricsSnapshot {
  atMs: number;
  subjects: Map<string, MetricValues>;
  containers: ContainerValues[];
}

export interface Collector {
  start(): void;
  /** Stops the loop and waits for a round in progress. */
  stop(): Promise<void>;
  /** One round now (tests and the loop). */
  round(): Promise<void>;
  latest(): MetricsSnapshot | undefined;
}

export interface CollectorDeps {
  db: Db;
  source: StatsSource;
  log: Logger;
  clock: Clock;
  /** The data directory whose file system the host's disk figures describe. */
  dataDir: string;
  /** Service name -> id, read each round (services are few). */
  serviceIds: () => Map<string, number>;
  /** Readings in flight at once; default 16 (the engine's one-shot answers wait for its 1 s tick). */
  concurrency?: number;
  intervalMs?: number;
  readHost?: (dataDir: string, atMs: number) => Promise<HostReading>;
}

/** Pure: the subject a container's figures count for; undefined for the proxy, builds and foreign ones. */
/** The label of an app container's replica slot (src/reconcilers/app/container-spec.ts `SLOT_LABEL`). */
const SLOT_LABEL = 'svc.slot';

/** Pure: an app container's replica slot; undefined for anything else or a label that is not a number. */
export function replicaOf(labels: Record<string, string>): number | undefined {
  const slot = labels[SLOT_LABEL];
  return labels[LABELS.role] === 'app' && slot !== undefined && /^[0-9]{1,3}$/.test(slot) ? Number(slot) : undefined;
}

export function subjectOf(labels: Record<string, string>, serviceIds: Map<string, number>): string | undefined {
  const role = labels[LABELS.role];
  if (role === 'app' && /^[0-9]+$/.test(labels[LABELS.appId] ?? '')) return `app:${labels[LABELS.appId]}`;
  if (role === 'service') {
    const id = serviceIds.get(labels[LABELS.service] ?? '');
    if (id !== undefined) return `service:${id}`;
  }
  return undefined;
}

/** Runs `fn` over `items`, at most `limit` at a time. */
async function pooled<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function createCollector(d: CollectorDeps): Collector {
  const intervalMs = d.intervalMs ?? ROUND_SECONDS * 1000;
  const host = d.readHost ?? readHost;
  let previous = new Map<string, ContainerCounters>();
  let previousHost: HostReading | undefined;
  let last: MetricsSnapshot | undefined;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let failing = false;

  async function round(): Promise<void> {
    const atMs = d.clock.now();
    const serviceIds = d.serviceIds();
    const listed: (RunningContainer & { subject: string })[] = [];
    for (const c of await d.source.running()) {
      const subject = subjectOf(c.labels, serviceIds);
      if (subject) listed.push({ ...c, subject });
    }
    const read = await pooled(listed, d.concurrency ?? 16, async (c) => ({ c, counters: await d.source.read(c.id) }));
    const readings: ContainerReading[] = read.flatMap(({ c, counters }) => (counters ? [{ id: c.id, name: c.name, subject: c.subject, replica: replicaOf(c.labels), counters }] : []));
    const { containers, subjects, replicas } = roundOf(readings, previous);
    const hostNow = await host(d.dataDir, atMs);
    subjects.set(HOST_SUBJECT, hostValues(hostNow, previousHost));
    writeMetricRound(d.db, [...subjects, ...replicas].map(([subject, values]) => ({ subject, values })), Math.floor(atMs / 1000), TIERS);
    // Only the containers of this round: a stopped one's counters are forgotten with it.
    previous = new Map(readings.map((r) => [r.id, r.counters]));
    previousHost = hostNow;
    last = { atMs, subjects, containers };
  }

  const tick = () => {
    timer = undefined;
    if (stopped) return;
    running = round()
      .then(() => {
        if (failing) d.log.info('metrics collection works again');
        failing = false;
      })
      .catch((err) => {
        // An engine down or restarting: say so once, keep trying every round.
        if (!failing) d.log.warn('metrics round failed', { error: err instanceof Error ? err.message : String(err) });
        failing = true;
      })
      .finally(() => {
        running = undefined;
        if (!stopped) timer = d.clock.setTimeout(tick, intervalMs);
      });
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      timer = d.clock.setTimeout(tick, 0);
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) d.clock.clearTimeout(timer);
      timer = undefined;
      await running;
    },
    round,
    latest: () => last,
  };
}
