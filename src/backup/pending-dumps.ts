// Dumps waiting to be loaded: a restore (online or `svc restore`) whose archive has `dumps/<name>.sql` but
// no `services/<name>/` leaves the service an empty data dir and the dump in `<data>/restore-dumps/`.
// The service reconciler initialises a fresh engine there; once the service is `active`, the backup
// reconciler (key `backup:dumps`) copies the dump into the data dir (mounted in the container), runs the
// catalog's load command inside the container, and removes both files. Persisted as files, so a restart
// resumes; a failed load keeps the file and is retried with backoff.
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { dataPathOf, kindOf } from '../catalog/catalog.js';
import type { Result } from '../controller/types.js';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { getServiceByName, openCredentials } from '../store/services.js';

export const PENDING_DUMPS_DIR = 'restore-dumps';
const IN_CONTAINER = '.svc-restore.sql';
const WAIT_MS = 2_000;

export interface PendingDumpDeps {
  db: Db;
  sealer: Sealer;
  runtime: Pick<Runtime, 'exec'>;
  log: Logger;
  dataDir: string;
}

/** Names of services with a dump waiting. */
export function pendingDumps(dataDir: string): string[] {
  const dir = join(dataDir, PENDING_DUMPS_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^[a-z][a-z0-9-]{0,62}\.sql$/.test(f))
    .map((f) => f.slice(0, -4));
}

/** One pass: loads the dumps whose services are active; asks to be called again while some wait. */
export async function loadPendingDumps(d: PendingDumpDeps): Promise<Result> {
  let waiting = false;
  for (const name of pendingDumps(d.dataDir)) {
    const file = join(d.dataDir, PENDING_DUMPS_DIR, `${name}.sql`);
    const row = getServiceByName(d.db, name);
    const kind = row ? kindOf(row.type) : undefined;
    if (!row || row.deletedAt || !kind?.loadDump) {
      d.log.warn('restore: dropped a dump whose service is gone or cannot load dumps', { service: name });
      rmSync(file, { force: true });
      continue;
    }
    if (row.status !== 'active') {
      waiting = true;
      continue;
    }
    const inDataDir = join(row.dataDir, IN_CONTAINER);
    copyFileSync(file, inDataDir);
    try {
      const cmd = kind.loadDump(openCredentials(d.sealer, row), `${dataPathOf(kind, row.version)}/${IN_CONTAINER}`);
      const res = await d.runtime.exec(row.containerName, cmd.cmd, { env: cmd.env });
      if (res.exitCode !== 0) throw new Error(`loading the dump of ${name} failed (exit ${res.exitCode}): ${res.stderr.trim().split('\n').slice(-3).join(' ')}`);
    } finally {
      rmSync(inDataDir, { force: true });
    }
    rmSync(file, { force: true });
    d.log.info('restore: dump loaded', { service: name });
  }
  return waiting ? { requeueAfterMs: WAIT_MS } : {};
}
