// Data of a service on another node (issue 19; docs/decisions/0042-service-data-on-other-nodes.md): what a
// backup pays to read a data directory from a worker through its agent (Docker's archive endpoint), beside
// the same bytes on the manager's own disk. A three-node Swarm of this machine whose workers have disks of
// their own (test/support/swarm-cluster.ts `ownDisk`), a redis pinned to a worker (`svc.services=true`);
// rounds alternate: a backup of the state as it is, with 64 MiB of random bytes added in the redis's data
// directory on the worker, and with the same 64 MiB in a directory of the manager's volumes/.
//
//   npm run bench:pinned-data -- [--rounds 2] [--mib 64]
//
// Needs root (network namespaces). Traffic goes only to loopback and the cluster's namespaces; the cluster,
// the daemon and the directories are removed at the end, even on error.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CADDY_IMAGE, ensureCaddyImage } from '../test/support/caddy-image.js';
import { startTestDaemon, type TestDaemon } from '../test/support/daemon.js';
import { ensureTestImages, WEB_V1 } from '../test/support/images.js';
import { ensureServiceImages, SERVICE_TEST_IMAGES } from '../test/support/service-images.js';
import { createCluster, destroyCluster, type Cluster, swarmDaemonEnv } from '../test/support/swarm-cluster.js';
import { waitFor } from '../test/support/wait.js';
import { loadAvg, log, numFlag, runMain } from './common.js';

const ROUNDS = numFlag('rounds', 2, 1, 20);
const MIB = numFlag('mib', 64, 1, 1024);

async function main() {
  let cluster: Cluster | undefined;
  let t: TestDaemon | undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-bench-pinned-'));
  try {
    await Promise.all([ensureTestImages(), ensureCaddyImage(), ensureServiceImages()]);
    log(`creating the cluster (${await loadAvg()})`);
    cluster = await createCluster(3, { ownDisk: dataDir });
    const c = cluster;
    const worker = c.nodes[1]!;
    const d = (args: string[]) => c.docker(c.manager, args).trim();
    const [v1, caddy, redisImage] = c.pushImages([WEB_V1, CADDY_IMAGE, SERVICE_TEST_IMAGES.redis]);
    d(['node', 'update', '--label-add', 'svc.services=true', worker.hostname]);
    mkdirSync(join(worker.disk!, 'services', 'pb-cache'), { recursive: true, mode: 0o700 });
    t = await startTestDaemon(
      'pinned-bench',
      { ...swarmDaemonEnv(c, { probe: v1, proxy: caddy }), SVC_IMAGE_REDIS: redisImage },
      { dataDir },
    );
    const daemon = t;
    const made = await daemon.api('POST', '/api/services', { name: 'pb-cache', type: 'redis' });
    if (made.status !== 201) throw new Error(`create service: ${made.status} ${JSON.stringify(made.body)}`);
    await waitFor(async () => (await daemon.api('GET', `/api/services/${made.body.id}`)).body.status === 'active', { timeoutMs: 120_000, what: 'the redis on the worker active' });

    const blob = randomBytes(MIB * 1024 * 1024);
    const onWorker = join(worker.disk!, 'services', 'pb-cache', 'blob');
    const onManager = join(dataDir, 'volumes', 'bench', 'blob');
    const backup = async () => {
      const t0 = performance.now();
      const res = await daemon.api('POST', '/api/backups');
      if (res.status !== 201 || res.body.status !== 'completed') throw new Error(`backup: ${res.status} ${JSON.stringify(res.body)}`);
      await rm(join(dataDir, 'backups', res.body.filename));
      return performance.now() - t0;
    };
    const ms: Record<'none' | 'worker' | 'manager', number[]> = { none: [], worker: [], manager: [] };
    log(`measuring, ${ROUNDS} rounds (${await loadAvg()})`);
    for (let round = 0; round < ROUNDS; round++) {
      ms.none.push(await backup());
      await writeFile(onWorker, blob);
      ms.worker.push(await backup());
      await rm(onWorker);
      await mkdir(join(dataDir, 'volumes', 'bench'), { recursive: true });
      await writeFile(onManager, blob);
      ms.manager.push(await backup());
      await rm(join(dataDir, 'volumes', 'bench'), { recursive: true, force: true });
    }
    const f = (xs: number[]) => xs.map((x) => `${(x / 1000).toFixed(2)} s`).join(' / ');
    console.log(`backup of the same state, ${ROUNDS} rounds alternated (${await loadAvg()}):`);
    const rows: [string, number[]][] = [['as it is', ms.none], [`+ ${MIB} MiB on the worker (its agent)`, ms.worker], [`+ ${MIB} MiB on the manager's disk`, ms.manager]];
    for (const [label, xs] of rows) console.log(`  ${`${label}:`.padEnd(40)} ${f(xs)}`);
  } finally {
    await t?.close().catch(() => {});
    destroyCluster(cluster);
    await rm(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
