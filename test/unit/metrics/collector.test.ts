// The collector with a fake StatsSource, a fake clock and a real :memory: SQLite: rates from two readings,
// per-app sums over replicas, nothing new for a stopped container, and the three tiers downsampled and
// pruned right.
import { afterEach, describe, expect, it } from 'vitest';
import { createCollector, replicaOf, subjectOf } from '../../../src/metrics/collector.js';
import { readMetricRange, subjectsWithPrefix } from '../../../src/store/metrics.js';
import { metricsJson } from '../../../src/metrics/query.js';
import { rangeWindow } from '../../../src/metrics/tiers.js';
import type { ContainerCounters, RunningContainer, StatsSource } from '../../../src/runtime/stats.js';
import { silentLogger } from '../../../src/log.js';
import { createFakeClock } from '../../support/fake-clock.js';
import { memoryDb } from '../../support/db.js';
import type { Db } from '../../../src/store/db.js';

const appLabels = (id: number, slot = 0) => ({ 'svc.role': 'app', 'svc.app-id': String(id), 'svc.slot': String(slot) });

/** Containers whose CPU use per second is given; counters grow with the fake clock. */
function fakeSource(clock: { now(): number }) {
  const busy = new Map<string, { labels: Record<string, string>; cores: number; since: number; mem: number; cpuNs?: number }>();
  const source: StatsSource = {
    async running(): Promise<RunningContainer[]> {
      return [...busy].map(([id, c]) => ({ id, name: id, labels: c.labels }));
    },
    async read(id): Promise<ContainerCounters | undefined> {
      const c = busy.get(id);
      if (!c) return undefined;
      const s = (clock.now() - c.since) / 1000;
      return { atMs: clock.now(), cpuNs: c.cpuNs ?? c.cores * s * 1e9, memoryBytes: c.mem, memoryLimitBytes: 64 << 20, rxBytes: 1000 * s, txBytes: 500 * s, readBytes: 0, writeBytes: 4096 * s };
    },
  };
  return { source, busy };
}

const START = Date.UTC(2026, 10, 25, 0, 0, 0); // on a 15 min boundary

describe('metrics collector', () => {
  let db: Db;
  afterEach(() => db?.$client.close());

  function setup() {
    db = memoryDb();
    const clock = createFakeClock(START);
    const { source, busy } = fakeSource(clock);
    const host = async (_dir: string, atMs: number) => ({ atMs, busyMs: (atMs - START) / 2, memoryBytes: 1e9, memoryTotalBytes: 4e9, diskUsedBytes: 10, diskTotalBytes: 100 });
    const collector = createCollector({ db, source, log: silentLogger, clock, dataDir: '/x', serviceIds: () => new Map([['pg', 7]]), readHost: host });
    return { clock, busy, collector };
  }

  it('maps app replicas and services to their subjects, and nothing else', () => {
    const ids = new Map([['pg', 7]]);
    expect(subjectOf(appLabels(3, 1), ids)).toBe('app:3');
    expect(subjectOf({ 'svc.role': 'service', 'svc.service': 'pg' }, ids)).toBe('service:7');
    expect(subjectOf({ 'svc.role': 'service', 'svc.service': 'gone' }, ids)).toBeUndefined();
    expect(subjectOf({ 'svc.role': 'proxy' }, ids)).toBeUndefined();
    expect(subjectOf({ 'svc.role': 'build', 'svc.app-id': '3' }, ids)).toBeUndefined();
    expect(replicaOf(appLabels(3, 2))).toBe(2);
    expect(replicaOf({ 'svc.role': 'service', 'svc.slot': '1' })).toBeUndefined();
    expect(replicaOf({ 'svc.role': 'app', 'svc.slot': '../x' })).toBeUndefined();
  });

  it('keeps no per-replica rows for an app of one replica', async () => {
    const { clock, busy, collector } = setup();
    busy.set('a0', { labels: appLabels(2, 0), cores: 0.5, since: START, mem: 10 << 20 });
    await collector.round();
    await clock.advance(10_000);
    await collector.round();
    expect(subjectsWithPrefix(db, 'app:2/r', 10, 0)).toEqual([]);
    expect(readMetricRange(db, 'app:2', 10, 0)).toHaveLength(2);
  });

  it('sums replicas into the app, gives a rate from the second round on, and stops at a stopped container', async () => {
    const { clock, busy, collector } = setup();
    busy.set('a0', { labels: appLabels(1, 0), cores: 0.5, since: START, mem: 10 << 20 });
    busy.set('a1', { labels: appLabels(1, 1), cores: 0.25, since: START, mem: 20 << 20 });
    busy.set('s', { labels: { 'svc.role': 'service', 'svc.service': 'pg' }, cores: 0.1, since: START, mem: 5 << 20 });
    collector.start();
    await clock.advance(0);
    await clock.advance(10_000);
    await clock.advance(10_000);
    const now = Math.floor(clock.now() / 1000);
    const app = readMetricRange(db, 'app:1', 10, now - 3600);
    expect(app.map((p) => p.cpu)).toEqual([null, 0.75, 0.75]);
    expect(app[2]).toMatchObject({ memoryBytes: 30 << 20, memoryLimitBytes: 128 << 20, containers: 2, netRxBps: 2000, blockWriteBps: 8192 });
    expect(readMetricRange(db, 'service:7', 10, now - 3600).at(-1)!.cpu).toBeCloseTo(0.1);
    expect(readMetricRange(db, 'host', 10, now - 3600).at(-1)).toMatchObject({ cpu: 0.5, memoryBytes: 1e9, diskUsedBytes: 10 });
    expect(collector.latest()!.containers.map((c) => c.name).sort()).toEqual(['a0', 'a1', 's']);

    // Two replicas: each slot is kept as well as the sum; `svc top`'s subjects stay the app and the service.
    expect(readMetricRange(db, 'app:1/r0', 10, now - 3600).map((p) => p.cpu)).toEqual([null, 0.5, 0.5]);
    expect(readMetricRange(db, 'app:1/r1', 10, now - 3600).at(-1)).toMatchObject({ cpu: 0.25, memoryBytes: 20 << 20, containers: 1 });
    expect([...collector.latest()!.subjects.keys()].sort()).toEqual(['app:1', 'host', 'service:7']);
    const json = metricsJson(db, 'app:1', '1h', clock.now(), undefined, { byReplica: true });
    expect(json.replicas!.map((r) => [r.replica, r.points.at(-1)!.cpu_cores])).toEqual([[0, 0.5], [1, 0.25]]);
    expect(metricsJson(db, 'app:1', '1h', clock.now(), undefined).replicas).toBeUndefined();
    // A service and an app of one replica get no per-replica rows.
    expect(subjectsWithPrefix(db, 'service:7/', 10, 0)).toEqual([]);

    busy.delete('a0');
    busy.delete('a1');
    await clock.advance(10_000);
    expect(readMetricRange(db, 'app:1', 10, now - 3600)).toHaveLength(3);
    expect(readMetricRange(db, 'service:7', 10, now - 3600)).toHaveLength(4);
    await collector.stop();
  });

  it('keeps 10 s for an hour, 1 min averages for a day and 15 min averages for a week', async () => {
    const { clock, busy, collector } = setup();
    // The interval that ends at a round whose minute second is 0, 10 or 20 is 1 core busy, the other three
    // idle: every whole minute averages 0.5 cores.
    let cpuSeconds = 0;
    busy.set('w', { labels: appLabels(2), cores: 0, since: START, mem: 1 << 20 });
    const entry = busy.get('w')!;
    collector.start();
    await clock.advance(0);
    for (let i = 1; i <= 6 * 20; i++) {
      const next = clock.now() + 10_000;
      if ((next / 1000) % 60 < 30) cpuSeconds += 10;
      entry.cpuNs = cpuSeconds * 1e9;
      await clock.advance(10_000);
    }
    const now = Math.floor(clock.now() / 1000);
    const fine = readMetricRange(db, 'app:2', 10, now - 3600);
    expect(fine).toHaveLength(121);
    expect(fine.every((p) => p.ts % 10 === 0)).toBe(true);
    const minutes = readMetricRange(db, 'app:2', 60, now - 86400);
    expect(minutes.map((p) => p.ts % 60)).toEqual(minutes.map(() => 0));
    // Every whole minute after the first averages 0.5 cores (3 busy rounds of 1.0, 3 idle ones).
    for (const p of minutes.slice(1, -1)) expect(p.cpu).toBeCloseTo(0.5);
    const quarters = readMetricRange(db, 'app:2', 900, now - 7 * 86400);
    expect(quarters).toHaveLength(2);
    // 15:00 .. 20:00: five whole minutes (15 busy rounds of 30) and the busy round at 20:00.
    expect(quarters[1].cpu).toBeCloseTo(16 / 31);
    expect(quarters[0].memoryBytes).toBe(1 << 20);
    await collector.stop();
  });

  it('prunes each tier past what it keeps and reads each range from its tier', async () => {
    const { clock, busy, collector } = setup();
    busy.set('w', { labels: appLabels(3), cores: 0.2, since: START, mem: 1 });
    // Rounds every 10 min over 8 days would be slow with 10 s rounds: drive the rounds directly.
    for (let t = 0; t <= 8 * 86400; t += 600) {
      await clock.advance(t === 0 ? 0 : 600_000);
      await collector.round();
    }
    const now = Math.floor(clock.now() / 1000);
    const count = (tier: number) => (db.$client.prepare('SELECT count(*) n FROM metric_samples WHERE subject = ? AND tier = ?').get('app:3', tier) as { n: number }).n;
    expect(count(10)).toBe(6 + 1); // one hour of rounds every 10 min, both ends
    expect(count(60)).toBe(24 * 6 + 1);
    expect(count(900)).toBeLessThanOrEqual(7 * 96 + 1);
    const w = rangeWindow('7d', now);
    expect(w).toEqual({ tier: 900, since: now - 7 * 86400 });
    const week = readMetricRange(db, 'app:3', w.tier, w.since);
    expect(week.length).toBeGreaterThan(600);
    expect(week.at(-1)!.cpu).toBeCloseTo(0.2);
    expect(rangeWindow('1h', now).tier).toBe(10);
    expect(rangeWindow('24h', now).tier).toBe(60);
  });
});
