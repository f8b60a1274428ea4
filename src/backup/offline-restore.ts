// `svc restore FILE` with no daemon running: disaster recovery on a fresh host (API.md "CLI").
// The CLI (src/cli) owns argument parsing and the "is a daemon answering?" check; this module owns the
// restore itself: the archive is unpacked and checked exactly as an import is (extractArchive), its svc.db
// checked and migrated, and its key checked against its own `.env`. Then what the data dir held is moved
// aside, the archive's svc.db, services/, proxy/ and code-host key (mode 600) moved in (renames on one filesystem), and the `.env`
// written; any failure moves everything back. The daemon's next start recreates services and apps.
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { parseEnv } from 'node:util';
import { createSealer } from '../crypto.js';
import { CODEHOST_KEY_FILE } from './create-archive.js';
import { envFileText } from './env-text.js';
import { ArchiveError, extractArchive } from './extract-archive.js';
import { PENDING_DUMPS_DIR } from './pending-dumps.js';
import { KeyMismatchError, prepareSnapshot } from './snapshot.js';

export interface OfflineRestoreOptions {
  /** The `.tar.gz` archive to restore. */
  archivePath: string;
  /** `SVC_DATA_DIR` to restore into (created when missing). */
  dataDir: string;
  /** Where the archive's `.env` is written (mode 600): `.env` in the working directory. */
  envFile: string;
}

export interface OfflineRestoreResult {
  /** Human lines the CLI prints, one per thing restored. */
  summary: string[];
}

/**
 * Said after restoring the services of a Swarm (docs/decisions/0042-service-data-on-other-nodes.md): this writes the
 * manager's disk only (the daemon is stopped, so no node agent runs to reach another node's disk), and the
 * service reconciler never starts a service on an empty directory of a labelled node while its data is here.
 */
export const SWARM_NOTE =
  "on a Swarm: the services' data was restored on this host's disk. They run here while no node is labelled svc.services=true; " +
  'with such a label each waits in error saying its data is here: remove the label, or start svc without it and then restore a backup ' +
  "through svc with the label set to move them onto that node. This command does not reach other nodes' disks: services of this instance " +
  'still on the Swarm keep their node and the data there, so run `svc uninstall` (data kept) before restoring on a manager that still runs them';

/** What a data dir holds that a restore replaces (the rest, e.g. backups/, is left alone). */
const REPLACED = ['svc.db', 'svc.db-wal', 'svc.db-shm', 'services', 'proxy', 'volumes', CODEHOST_KEY_FILE, PENDING_DUMPS_DIR];

/** Restores an archive into a data directory with the daemon stopped. Throws an Error with a user-facing sentence. */
export async function restoreOffline(opts: OfflineRestoreOptions): Promise<OfflineRestoreResult> {
  const archive = resolve(opts.archivePath);
  const dataDir = resolve(opts.dataDir);
  const envFile = resolve(opts.envFile);
  if (!existsSync(archive)) throw new Error(`no such archive: ${archive}`);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(dataDir, '.restore-'));
  const unpacked = join(staging, 'archive');
  const previous = join(staging, 'previous');
  mkdirSync(unpacked, { mode: 0o700 });
  mkdirSync(previous, { mode: 0o700 });
  const summary: string[] = [];
  try {
    const contents = await extractArchive(archive, unpacked);
    if (!contents.hasEnv) throw new ArchiveError('the archive has no .env (its encryption key): it cannot be restored on a new host');
    const env = parseEnv(readFileSync(join(unpacked, '.env'), 'utf8')) as Record<string, string>;
    const key = Buffer.from(env.SVC_ENCRYPTION_KEY ?? '', 'base64');
    if (key.length !== 32) throw new ArchiveError("the archive's .env has no valid SVC_ENCRYPTION_KEY");
    try {
      prepareSnapshot(join(unpacked, 'svc.db'), undefined, createSealer(key));
    } catch (e) {
      if (e instanceof KeyMismatchError) throw new ArchiveError("the archive's svc.db was not sealed with the key in its .env");
      throw e;
    }
    const keyFile = join(unpacked, CODEHOST_KEY_FILE);
    const hasKey = existsSync(keyFile);
    if (hasKey && !lstatSync(keyFile).isFile()) throw new ArchiveError(`the archive's ${CODEHOST_KEY_FILE} is not a file`);
    const envTmp = `${envFile}.restore-tmp`;
    writeFileSync(envTmp, envFileText(hostEnv(env, dataDir, hasKey)), { mode: 0o600 });

    const moved: string[] = [];
    const placed: string[] = [];
    try {
      for (const name of REPLACED) {
        if (existsSync(join(dataDir, name))) {
          renameSync(join(dataDir, name), join(previous, name));
          moved.push(name);
        }
      }
      for (const name of ['svc.db', 'services', 'proxy', 'volumes', CODEHOST_KEY_FILE]) {
        if (existsSync(join(unpacked, name))) {
          renameSync(join(unpacked, name), join(dataDir, name));
          placed.push(name);
        }
      }
      for (const v of contents.volumeDirs) if (existsSync(join(dataDir, 'volumes', v))) chmodSync(join(dataDir, 'volumes', v), 0o777);
      // A private key is readable by its owner only, whatever mode the archive carried.
      if (hasKey) chmodSync(join(dataDir, CODEHOST_KEY_FILE), 0o600);
      if (!placed.includes('services')) {
        mkdirSync(join(dataDir, 'services'), { mode: 0o700 });
        placed.push('services');
      }
      const waiting = contents.dumps.filter((n) => !contents.serviceDirs.includes(n));
      if (waiting.length) {
        mkdirSync(join(dataDir, PENDING_DUMPS_DIR), { mode: 0o700 });
        placed.push(PENDING_DUMPS_DIR);
        for (const n of waiting) {
          mkdirSync(join(dataDir, 'services', n), { recursive: true, mode: 0o700 });
          renameSync(join(unpacked, 'dumps', `${n}.sql`), join(dataDir, PENDING_DUMPS_DIR, `${n}.sql`));
        }
      }
      renameSync(envTmp, envFile);
      chmodSync(envFile, 0o600);
      summary.push(`svc.db restored into ${dataDir}`);
      for (const s of contents.serviceDirs) summary.push(`service data restored: services/${s}`);
      for (const n of waiting) summary.push(`service ${n}: its dump is loaded once svc has started it`);
      if (contents.hasProxy) summary.push('proxy data (certificates) restored');
      for (const v of contents.volumeDirs) summary.push(`app volume restored: volumes/${v}`);
      if (hasKey) summary.push(`code-host app private key restored: ${join(dataDir, CODEHOST_KEY_FILE)} (mode 600)`);
      if (env.SVC_RUNTIME === 'swarm' && contents.serviceDirs.length > 0) summary.push(SWARM_NOTE);
      summary.push(`.env written to ${envFile} (mode 600, with SVC_ENCRYPTION_KEY); start svc from that directory`);
    } catch (err) {
      for (const name of placed) rmSync(join(dataDir, name), { recursive: true, force: true });
      for (const name of moved) renameSync(join(previous, name), join(dataDir, name));
      rmSync(envTmp, { force: true });
      throw err;
    }
    return { summary };
  } catch (err) {
    if (err instanceof ArchiveError) throw new Error(`cannot restore ${archive}: ${err.message}`);
    throw err;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** The archive's settings for this host: SVC_DATA_DIR is where we restored; a backup dir inside the old data dir follows it. */
function hostEnv(env: Record<string, string>, dataDir: string, hasKey: boolean): Record<string, string> {
  const out: Record<string, string> = { ...env, SVC_DATA_DIR: dataDir };
  const oldData = env.SVC_DATA_DIR;
  // The key file came back into this data dir: the setting follows it when it named the old one's.
  const keyPath = env.SVC_CODEHOST_APP_PRIVATE_KEY;
  if (hasKey && keyPath && oldData && resolve(keyPath) === resolve(oldData, CODEHOST_KEY_FILE)) out.SVC_CODEHOST_APP_PRIVATE_KEY = join(dataDir, CODEHOST_KEY_FILE);
  const backupDir = env.SVC_BACKUP_DIR;
  if (backupDir && oldData) {
    const rel = relative(resolve(oldData), resolve(backupDir));
    if (!rel.startsWith('..') && !isAbsolute(rel)) delete out.SVC_BACKUP_DIR;
  }
  return out;
}
