// Builds one full-state archive (SPEC.md 2.7, API.md "Backups"): an online snapshot of svc.db, a dump of
// every running relational service (run inside its container), the services/, proxy/ and volumes/ folders of
// the data dir (a service's folder read on the node that holds it, when that is another node of a Swarm),
// the code-host private key and the `.env` as it is at backup time. The dumps stream into staging files while
// the data directories are compressed, and join the archive last. Everything is written to
// `.<name>.partial` in the backup dir, fsynced and only then renamed into place, so a crash or a full disk
// never leaves a file under a published name.
import { mkdir, mkdtemp, rm, rename, stat, chmod, open } from 'node:fs/promises';
import { join } from 'node:path';
import { dataPathOf, kindOf } from '../catalog/catalog.js';
import type { Sealer } from '../crypto.js';
import type { Logger } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { listServices, openCredentials } from '../store/services.js';
import { readEnvFile } from '../config.js';
import { envFileText } from './env-text.js';
import type { TarWriter } from './tar-writer.js';

/** The code-host app's private key in the data dir (desired/codehost.ts writes it), kept at the archive's top. */
export const CODEHOST_KEY_FILE = 'codehost-app.pem';

export interface ArchiveDeps {
  db: Db;
  sealer: Sealer;
  runtime: Pick<Runtime, 'execToFile' | 'inspect' | 'dataNodeOf' | 'readDir'>;
  log: Logger;
  dataDir: string;
  backupDir: string;
  /** config.effectiveEnv: the settings of the daemon's start (includes SVC_ENCRYPTION_KEY). */
  effectiveEnv: Record<string, string>;
  /** The `.env` as it is on disk now: what the manifest flow wrote since the start overrides effectiveEnv. */
  envFile?: string;
  /** gzip level (default 6). */
  gzipLevel?: number;
}

/** Prefixes of the work files in the backup dir; nothing published ever starts with a dot. */
export const PARTIAL_SUFFIX = '.partial';
export const STAGING_PREFIX = '.staging-';

/** Creates the backup dir with mode 700 (and tightens it if it already existed). */
export async function ensureBackupDir(dir: string) {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/** Writes the archive `filename` into the backup dir; returns its size. Throws with the reason on failure. */
export async function createArchive(d: ArchiveDeps, filename: string): Promise<number> {
  await ensureBackupDir(d.backupDir);
  const staging = await mkdtemp(join(d.backupDir, STAGING_PREFIX));
  const partial = join(d.backupDir, `.${filename}${PARTIAL_SUFFIX}`);
  const final = join(d.backupDir, filename);
  let writer: TarWriter | undefined;
  try {
    // better-sqlite3's online backup copies pages in steps; writers are never blocked for long.
    await d.db.$client.backup(join(staging, 'svc.db'));
    // The tar writer (and tar itself) is loaded at the first backup: an idle daemon never needs it.
    const { TarWriter: Writer } = await import('./tar-writer.js');
    const w = (writer = new Writer(partial, d.gzipLevel));
    // The dumps run in their containers (another core) while the data directories are compressed here;
    // they join the archive last. A failed dump fails the backup at once (Promise.all).
    const [dumps] = await Promise.all([
      dumpServices(d, staging),
      (async () => {
        await w.addFile('svc.db', join(staging, 'svc.db'));
        await w.addBuffer('.env', Buffer.from(envFileText(archiveEnv(d))));
        // The code-host app's private key (written by the manifest flow); absent when none is set up.
        await w.addFile(CODEHOST_KEY_FILE, join(d.dataDir, CODEHOST_KEY_FILE));
        // A service pinned to another node has its data on that node's disk (the manager's copy of its
        // directory is empty): read there, through the node's engine, under the same name.
        const elsewhere = await servicesHeldElsewhere(d);
        await w.addTree('services', join(d.dataDir, 'services'), (rel) => elsewhere.has(rel.slice('services/'.length)));
        for (const [name, s] of elsewhere) await w.addTar(`services/${name}`, await d.runtime.readDir(s.containerName, s.dataPath));
        await w.addTree('proxy', join(d.dataDir, 'proxy'));
        // Apps' persistent volumes (issue 22), copied live: like a running app's own files, a file the app
        // is writing at that moment may be caught half-written. The trash of purged apps is not data.
        await w.addTree('volumes', join(d.dataDir, 'volumes'), (rel) => rel === 'volumes/.trash');
      })(),
    ]);
    await w.addDir('dumps');
    for (const name of dumps) await w.addFile(`dumps/${name}.sql`, join(staging, 'dumps', `${name}.sql`));
    await w.finish();
    writer = undefined;
    await rename(partial, final);
    await fsyncDir(d.backupDir);
    return (await stat(final)).size;
  } catch (err) {
    writer?.abort();
    await rm(partial, { force: true });
    throw describe(err);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Settings the archive never carries: the key of its off-host copies is kept apart from them (issue 21). */
const KEPT_APART = new Set(['SVC_BACKUP_PASSPHRASE']);

/** The archive's settings: the start's, with the SVC_* values of the `.env` as it is now on top. */
export function archiveEnv(d: Pick<ArchiveDeps, 'effectiveEnv' | 'envFile'>): Record<string, string> {
  const now = d.envFile ? readEnvFile(d.envFile) : {};
  const out = { ...d.effectiveEnv };
  for (const [k, v] of Object.entries(now)) if (k.startsWith('SVC_')) out[k] = v;
  for (const k of KEPT_APART) delete out[k];
  return out;
}

/** Services whose data directory is on another node's disk (name -> container and data path there). */
async function servicesHeldElsewhere(d: ArchiveDeps): Promise<Map<string, { containerName: string; dataPath: string }>> {
  const out = new Map<string, { containerName: string; dataPath: string }>();
  for (const svc of listServices(d.db)) {
    if (await d.runtime.dataNodeOf(svc.containerName)) out.set(svc.name, { containerName: svc.containerName, dataPath: dataPathOf(kindOf(svc.type), svc.version) });
  }
  return out;
}

/** Dumps every running service whose type has a dump command; returns the names dumped. */
async function dumpServices(d: ArchiveDeps, staging: string): Promise<string[]> {
  const names: string[] = [];
  await mkdir(join(staging, 'dumps'), { mode: 0o700 });
  for (const svc of listServices(d.db)) {
    const kind = kindOf(svc.type);
    if (!kind.dump) continue;
    // A stopped service's data dir is at rest: its copy under services/ is consistent without a dump.
    const info = await d.runtime.inspect(svc.containerName);
    if (!info?.running) continue;
    const cmd = kind.dump(openCredentials(d.sealer, svc));
    // Streamed to the staging file: a dump is as big as the database and never sits in memory.
    const res = await d.runtime.execToFile(svc.containerName, cmd.cmd, join(staging, 'dumps', `${svc.name}.sql`), { env: cmd.env });
    if (res.exitCode !== 0) {
      throw new Error(`dump of service ${svc.name} failed (exit ${res.exitCode}): ${res.stderr.trim().split('\n').slice(-3).join(' ')}`);
    }
    names.push(svc.name);
  }
  return names;
}

async function fsyncDir(dir: string) {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** One sentence for the record's `error`: a full disk says so plainly. */
function describe(err: unknown): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'SQLITE_FULL') return new Error('no space left on the backup disk (ENOSPC); nothing was published');
  if (code === 'EDQUOT') return new Error('disk quota exceeded on the backup disk (EDQUOT); nothing was published');
  return e;
}
