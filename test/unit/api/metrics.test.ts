// The metrics read endpoints with rows written as the collector writes them (issue 22): an app's points
// per replica on request (`?by=replica`), refused for anything else, and the app page's chart per replica.
import { beforeEach, describe, expect, it } from 'vitest';
import { writeMetricRound, type MetricValues } from '../../../src/store/metrics.js';
import { TIERS } from '../../../src/metrics/tiers.js';
import { createTestApi, type TestApi } from '../../support/api.js';

let t: TestApi;
let id: number;
const values = (cpu: number, mem: number): MetricValues => ({
  cpu, memoryBytes: mem, memoryLimitBytes: 64 << 20, netRxBps: 0, netTxBps: 0, blockReadBps: 0, blockWriteBps: 0, containers: 1, diskUsedBytes: null, diskTotalBytes: null,
});

beforeEach(async () => {
  t = createTestApi();
  await t.login();
  id = (await t.request('POST', '/api/apps', { name: 'mx', access_mode: 'port', fallback_port: 18095, replicas: 2 })).body.id;
  const now = Math.floor(t.clock.now().getTime() / 1000);
  for (const at of [now - 20, now - 10]) {
    writeMetricRound(t.db, [
      { subject: `app:${id}`, values: { ...values(0.75, 30 << 20), containers: 2, memoryLimitBytes: 128 << 20 } },
      { subject: `app:${id}/r0`, values: values(0.5, 10 << 20) },
      { subject: `app:${id}/r1`, values: values(0.25, 20 << 20) },
    ], at, TIERS);
  }
});

describe('GET /api/apps/{id}/metrics?by=replica', () => {
  it('answers the sum, and each replica on request', async () => {
    const plain = (await t.request('GET', `/api/apps/${id}/metrics`)).body;
    expect(plain.points.map((p: { cpu_cores: number }) => p.cpu_cores)).toEqual([0.75, 0.75]);
    expect(plain.replicas).toBeUndefined();
    const by = (await t.request('GET', `/api/apps/${id}/metrics?range=1h&by=replica`)).body;
    expect(by.points).toEqual(plain.points);
    expect(by.replicas.map((r: { replica: number; points: { cpu_cores: number; memory_bytes: number }[] }) => [r.replica, r.points.map((p) => p.cpu_cores), r.points[1].memory_bytes])).toEqual([
      [0, [0.5, 0.5], 10 << 20],
      [1, [0.25, 0.25], 20 << 20],
    ]);
    const bad = await t.request('GET', `/api/apps/${id}/metrics?by=container`);
    expect(bad.status).toBe(400);
    expect(bad.body.details).toMatchObject({ field: 'by' });
  });

  it('the app page draws one line per replica with ?by=replica, the sum otherwise', async () => {
    const sum = await t.request('GET', `/apps/${id}/metrics`);
    expect(sum.body).toContain(`href="/apps/${id}/metrics?range=1h&amp;by=replica#metrics">Per replica</a>`);
    expect(sum.body).toMatch(/aria-label="CPU: CPU 75 %"/);
    const per = await t.request('GET', `/apps/${id}/metrics?by=replica`);
    expect(per.body).toMatch(/aria-label="CPU: replica 0 50 %, replica 1 25 %"/);
    expect(per.body).toMatch(/aria-label="Memory: replica 0 10.0 MiB, replica 1 20.0 MiB"/);
    expect(per.body).toContain(`href="/apps/${id}/metrics?range=24h&amp;by=replica#metrics"`);
  });
});
