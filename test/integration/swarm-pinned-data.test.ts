// Backups and restores of managed services pinned to a worker (issue 19;
// docs/decisions/0042-service-data-on-other-nodes.md), on a real three-node Swarm whose workers each have a
// disk of their own at the daemon's data directory (test/support/swarm-cluster.ts `ownDisk`), as separate
// machines do: a postgres and a redis run on the worker labelled `svc.services=true`, their data on that
// worker's disk only, their directories made there by svc (no hand step), and a Garage with its garage.toml
// written there and its bucket and key set up through the edge relay. A backup holds that data (read through
// the worker's agent), not the manager's empty directories; a restore puts the archive's data back on the
// worker's disk (through a short-lived helper there) and the first values come back.
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCluster, destroyCluster, type Cluster, type ClusterNode, swarmDaemonEnv } from '../support/swarm-cluster.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { CADDY_IMAGE, ensureCaddyImage } from '../support/caddy-image.js';
import { ensureServiceImages, SERVICE_TEST_IMAGES } from '../support/service-images.js';
import { client, type SqlService } from '../support/backup-sql.js';
import { waitFor } from '../support/wait.js';
import { HELD_ON_NODE_FILE } from '../../src/reconcilers/service/node-dir.js';

let cluster: Cluster | undefined;
let t: TestDaemon | undefined;
let dataDir: string;
let scratch: string;
let worker: ClusterNode;
let pg: SqlService;
let cacheId: number;
let objsId: number;

const d = (args: string[]) => cluster!.docker(cluster!.manager, args).trim();
/** The manager's directory of a service held on the worker: nothing but svc's note, read as the node it names. */
const heldHere = (name: string) => {
  const dir = join(dataDir, 'services', name);
  return readdirSync(dir).map((f) => (f === HELD_ON_NODE_FILE ? (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { hostname: string }).hostname : f));
};
/** The host name of the node running a service's task. */
const nodeOf = (service: string) => {
  const node = d(['service', 'ps', '--filter', 'desired-state=running', '--format', '{{.Node}}', service]).split('\n')[0] ?? '';
  return node;
};
const redis = async (...args: string[]) => {
  const c = (await t!.api('GET', `/api/services/${cacheId}/credentials`)).body;
  const r = await t!.daemon.runtime.exec(`${t!.instance}-svc-pd-cache`, ['redis-cli', '-h', '127.0.0.1', ...args], { env: { REDISCLI_AUTH: c.password } });
  if (r.exitCode !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

beforeAll(async () => {
  await Promise.all([ensureTestImages(), ensureCaddyImage(), ensureServiceImages()]);
  dataDir = await mkdtemp(join(tmpdir(), 'svc-test-pinned-'));
  scratch = await mkdtemp(join(tmpdir(), 'svc-pinned-scratch-'));
  cluster = await createCluster(3, { ownDisk: dataDir });
  worker = cluster.nodes[1]!;
  // One save for all five: the postgres, redis and garage stand-ins share their 800 MB base layer.
  const [v1, caddy, pgImage, redisImage, garageImage] = cluster.pushImages([WEB_V1, CADDY_IMAGE, SERVICE_TEST_IMAGES.postgres, SERVICE_TEST_IMAGES.redis, SERVICE_TEST_IMAGES.garage]);
  // No directory made by hand on the worker: svc makes each service's there before creating it
  // (docs/decisions/0042-service-data-on-other-nodes.md).
  d(['node', 'update', '--label-add', 'svc.services=true', worker.hostname]);
  expect(existsSync(join(worker.disk!, 'services'))).toBe(false);
  t = await startTestDaemon(
    'pinned',
    { ...swarmDaemonEnv(cluster, { probe: v1, proxy: caddy }), SVC_IMAGE_POSTGRES: pgImage, SVC_IMAGE_REDIS: redisImage, SVC_IMAGE_GARAGE: garageImage! },
    { dataDir },
  );
  // The agents first: a service's readiness check on the worker is an exec through its agent.
  await waitFor(() => d(['service', 'ls', '--filter', `label=svc.instance=${t!.instance}`, '--filter', 'label=svc.role=agent', '--format', '{{.Replicas}}']).split('\n').filter((r) => r === '1/1').length === 2, {
    timeoutMs: 60_000,
    what: 'an agent running on each worker',
  });
  const made: Record<string, number> = {};
  for (const [name, type] of [['pd-pg', 'postgres'], ['pd-cache', 'redis'], ['pd-objs', 'garage']]) {
    const res = await t.api('POST', '/api/services', { name, type });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    made[name!] = res.body.id;
  }
  const t0 = performance.now();
  const took: string[] = [];
  for (const [name, id] of Object.entries(made)) {
    await waitFor(async () => {
      const s = (await t!.api('GET', `/api/services/${id}`)).body;
      if (s.status !== 'active') throw new Error(`${s.name} is ${s.status}: ${s.status_message ?? s.message ?? JSON.stringify(s)}`);
      return true;
    }, { timeoutMs: 90_000, what: `service ${id} active` });
    took.push(`${name} ${(performance.now() - t0).toFixed(0)} ms`);
  }
  console.log(`created on the worker, their directories made there by svc, to active (from the three POSTs): ${took.join(', ')}`);
  pg = client(t, made['pd-pg']!, 'pd-pg', 'postgres');
  cacheId = made['pd-cache']!;
  objsId = made['pd-objs']!;
}, 300_000);

afterAll(async () => {
  await t?.close().catch(() => {});
  destroyCluster(cluster);
  if (scratch) await rm(scratch, { recursive: true, force: true });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 120_000);

describe('services pinned to a worker', () => {
  let backupId: number;

  it("run on the worker with their data on its disk; a backup holds that data, not the manager's empty directories", async () => {
    expect(nodeOf(`${t!.instance}-svc-pd-pg`)).toBe(worker.hostname);
    expect(nodeOf(`${t!.instance}-svc-pd-cache`)).toBe(worker.hostname);
    await pg.run("CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'first')");
    expect(await redis('SET', 'k', 'first')).toBe('OK');
    // The data is on the worker's disk; the manager's directories are what svc made there: empty.
    expect(existsSync(join(worker.disk!, 'services', 'pd-pg', 'PG_VERSION'))).toBe(true);
    // Made by svc with the manager's mode; its helper on the worker is gone.
    expect(statSync(join(worker.disk!, 'services', 'pd-cache')).mode & 0o777).toBe(0o700);
    // The Garage: its config on the worker (600), none on the manager; its key made through the relay.
    expect(nodeOf(`${t!.instance}-svc-pd-objs`)).toBe(worker.hostname);
    expect(statSync(join(worker.disk!, 'services', 'pd-objs', 'garage.toml')).mode & 0o777).toBe(0o600);
    expect(heldHere('pd-objs')).toEqual([worker.hostname]);
    expect((await t!.api('GET', `/api/services/${objsId}/credentials`)).body.access_key).toMatch(/^GK/);
    // What one preparation costs (helper made on the worker, mkdir, one file, helper removed), twice.
    const node = (await t!.daemon.runtime.dataNodeOf(`${t!.instance}-svc-pd-pg`))!;
    const costs: number[] = [];
    for (const i of [1, 2]) {
      const p0 = performance.now();
      const disk = await t!.daemon.runtime.openNodeDisk(node, dataDir, `measure-${i}`);
      await disk.mkdir(`services/pd-measure-${i}`);
      await disk.writeFile(`services/pd-measure-${i}/f.toml`, 'x = 1\n', 0o600);
      await disk.remove(`services/pd-measure-${i}`);
      await disk.close();
      costs.push(performance.now() - p0);
    }
    console.log(`one preparation on the worker (helper up, mkdir, a file, helper removed): ${costs.map((c) => c.toFixed(0)).join(' / ')} ms`);
    expect(d(['service', 'ls', '-q', '--filter', `label=svc.instance=${t!.instance}`, '--filter', 'label=svc.role=disk'])).toBe('');
    expect(heldHere('pd-pg')).toEqual([worker.hostname]);
    expect(heldHere('pd-cache')).toEqual([worker.hostname]);

    const t0 = performance.now();
    const res = await t!.api('POST', '/api/backups');
    const ms = performance.now() - t0;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe('completed');
    backupId = res.body.id;
    const out = join(scratch, 'a');
    await mkdir(out);
    const owners = new Map<string, number | undefined>();
    await tar.x({ file: join(dataDir, 'backups', res.body.filename), cwd: out, onReadEntry: (e) => void owners.set(e.path, e.uid) });
    // The worker's files, with their owner there (postgres and redis are uid 999 in the images).
    expect((await stat(join(out, 'services', 'pd-pg', 'PG_VERSION'))).isFile()).toBe(true);
    expect(owners.get('services/pd-pg/PG_VERSION')).toBe(999);
    expect(readdirSync(join(out, 'services', 'pd-pg'))).toContain('base');
    const aof = readdirSync(join(out, 'services', 'pd-cache', 'appendonlydir'));
    const aofText = aof.map((f) => readFileSync(join(out, 'services', 'pd-cache', 'appendonlydir', f), 'latin1')).join('');
    expect(aofText).toContain('first');
    expect(await readFile(join(out, 'dumps', 'pd-pg.sql'), 'utf8')).toContain('first');
    console.log(`backup of a postgres and a redis on a worker: ${ms.toFixed(0)} ms, archive ${res.body.size_bytes} bytes`);
  }, 120_000);

  it("a restore brings the first values back, on the worker: its services/ swapped there, nothing left behind", async () => {
    await pg.run("UPDATE notes SET body = 'second'");
    expect(await redis('SET', 'k', 'second')).toBe('OK');
    const t0 = performance.now();
    const res = await t!.api('POST', `/api/backups/${backupId}/restore`);
    const ms = performance.now() - t0;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ restored: true, backup_id: backupId });
    for (const id of [pg.id, cacheId, objsId]) {
      await waitFor(async () => (await t!.api('GET', `/api/services/${id}`)).body.status === 'active', { timeoutMs: 90_000, what: `service ${id} active again` });
    }
    await waitFor(async () => (await pg.notes().catch(() => [])).length > 0, { timeoutMs: 60_000, what: 'pd-pg answering' });
    expect(await pg.notes()).toEqual(['first']);
    expect(await waitFor(async () => redis('GET', 'k'), { timeoutMs: 30_000, what: 'pd-cache answering' })).toBe('first');
    // On the worker again, from its own disk; the manager keeps its empty directories.
    expect(nodeOf(`${t!.instance}-svc-pd-pg`)).toBe(worker.hostname);
    expect(nodeOf(`${t!.instance}-svc-pd-cache`)).toBe(worker.hostname);
    expect(heldHere('pd-pg')).toEqual([worker.hostname]);
    // Nothing left behind: no staging on the worker's disk, no helper service.
    expect(readdirSync(worker.disk!).filter((f) => f.startsWith('.restore-'))).toEqual([]);
    expect(d(['service', 'ls', '-q', '--filter', `label=svc.instance=${t!.instance}`, '--filter', 'label=svc.role=disk'])).toBe('');
    console.log(`restore of a postgres and a redis onto a worker, to its 200: ${ms.toFixed(0)} ms`);
  }, 180_000);

  it("a delete with purge removes the data on the worker's disk too, and the helper", async () => {
    expect(existsSync(join(worker.disk!, 'services', 'pd-cache', 'appendonlydir'))).toBe(true);
    const res = await t!.api('DELETE', `/api/services/${cacheId}?purge=true&force=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    // The API forgets it at once; the reconciler purges the worker's directory, then the manager's.
    await waitFor(async () => !existsSync(join(dataDir, 'services', 'pd-cache')), { timeoutMs: 60_000, what: "pd-cache's directory purged" });
    expect(existsSync(join(worker.disk!, 'services', 'pd-cache'))).toBe(false);
    expect(d(['service', 'ls', '-q', '--filter', `label=svc.instance=${t!.instance}`, '--filter', 'label=svc.role=disk'])).toBe('');
  }, 90_000);
});
