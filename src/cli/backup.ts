// `svc backup create|list|download` (thin calls of /api/backups; create waits for the completed record) and
// `svc restore`: `svc restore ID` asks the daemon at SVC_URL to restore that backup and follows the
// operation, printing each phase; `svc restore FILE` is the offline disaster recovery: it refuses while a
// daemon answers (that one restores through its API) and otherwise hands the archive to restoreOffline().
import { createWriteStream, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readEnvFile } from '../config.js';
import { restoreOffline } from '../backup/offline-restore.js';
import { CliError, type Client } from './client.js';
import { restoreFromBucket, restoreFromTarget } from './restore-remote.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

interface BackupJson {
  id: number;
  filename: string;
  size_bytes: number;
  status: string;
  created_at: string;
  error?: string | null;
}

export async function backupCommand(client: Client, o: { action: string; id?: string; output?: string; pollMs?: number; json?: boolean }): Promise<number> {
  if (o.action === 'list') {
    const list = await client.json<BackupJson[]>('GET', '/api/backups');
    if (o.json) return printJson(list), 0;
    if (list.length === 0) process.stdout.write('no backups\n');
    else process.stdout.write(formatTable([['ID', 'FILE', 'SIZE', 'STATUS', 'CREATED'], ...list.map((b) => [String(b.id), b.filename, String(b.size_bytes), b.status, b.created_at])]));
    return 0;
  }
  if (o.action === 'create') {
    // The daemon answers once the archive is written (201 completed, 500 failed: a CliError with its reason).
    let b = await client.json<BackupJson>('POST', '/api/backups');
    process.stdout.write(`backup ${b.id} (${b.filename}) ${b.status === 'running' ? 'started' : b.status}\n`);
    // An older daemon answered the running record: follow it.
    const deadline = Date.now() + 60 * 60_000;
    while (b.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, o.pollMs ?? 500));
      b = await client.json<BackupJson>('GET', `/api/backups/${b.id}`);
    }
    if (b.status !== 'completed') throw new CliError(`backup ${b.id} ${b.status}${b.error ? `: ${b.error}` : ''}`);
    process.stdout.write(`backup ${b.id} completed: ${b.filename}, ${b.size_bytes} bytes\n`);
    return 0;
  }
  if (o.action === 'download') {
    if (!o.id || !/^[1-9][0-9]*$/.test(o.id)) throw new CliError('usage: svc backup download ID [-o FILE]', 2);
    const res = await client.raw(`/api/backups/${o.id}/download`);
    const named = /filename="([^"/\\]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
    const target = resolve(o.output ?? named ?? `svc-backup-${o.id}.tar.gz`);
    if (!res.body) throw new CliError('the archive download was empty');
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(target, { mode: 0o600 }));
    process.stdout.write(`wrote ${target}\n`);
    return 0;
  }
  throw new CliError(`unknown backup action "${o.action}"; use create, list or download`, 2);
}

/** True when something answers svc's health endpoint at the URL within a short time. */
async function daemonAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

interface RestoreJson {
  id: number;
  backup_id: number;
  phase: string;
  safety_backup_id: number | null;
  error: string | null;
}

/** `svc restore ID`: the daemon's restore of backup ID, followed until it has settled. */
async function restoreOnline(client: Client, backupId: string, pollMs: number, write: (s: string) => void): Promise<number> {
  let op = await client.json<RestoreJson>('POST', `/api/backups/${backupId}/restore?wait=false`);
  write(`restore ${op.id} of backup ${op.backup_id}: ${op.phase}\n`);
  let last = op.phase;
  while (op.phase !== 'completed' && op.phase !== 'failed') {
    await new Promise((r) => setTimeout(r, pollMs));
    op = await client.json<RestoreJson>('GET', `/api/restores/${op.id}`);
    if (op.phase !== last) write(`restore ${op.id}: ${op.phase}\n`);
    last = op.phase;
  }
  if (op.phase === 'failed') throw new CliError(`restore ${op.id} failed: ${op.error ?? 'no reason given'}`);
  write(`restore ${op.id} completed; safety backup ${op.safety_backup_id}\n`);
  return 0;
}

export async function restoreCommand(
  client: Client,
  o: { file?: string; target?: string; latest?: boolean; identity?: string; pollMs?: number; write?: (s: string) => void },
): Promise<number> {
  const write = o.write ?? ((t: string) => process.stdout.write(t));
  const online = (id: string) => restoreOnline(client, id, o.pollMs ?? 500, write);
  if (o.target) {
    if (!o.latest || o.file) throw new CliError('usage: svc restore --target NAME --latest', 2);
    return restoreFromTarget(client, o.target, online, write);
  }
  if (!o.file) throw new CliError('usage: svc restore ID | FILE | s3://BUCKET/KEY | --target NAME --latest', 2);
  if (o.latest && !o.file.startsWith('s3://')) throw new CliError('--latest goes with s3://BUCKET/PREFIX/ or --target NAME', 2);
  // A number that names no file here is a backup id.
  if (/^[1-9][0-9]*$/.test(o.file) && !existsSync(o.file)) return online(o.file);
  if (o.file.startsWith('s3://') && (await daemonAnswers(client.url))) {
    throw new CliError(`a svc daemon answers at ${client.url}; stop it to restore from a bucket, or use svc restore --target NAME --latest through it`);
  }
  if (o.file.startsWith('s3://')) {
    const envFile = resolve('.env');
    const fileEnv = readEnvFile(envFile);
    const get = (k: string) => process.env[k] || fileEnv[k] || undefined;
    return restoreFromBucket({
      url: o.file,
      latest: !!o.latest,
      dataDir: resolve(get('SVC_DATA_DIR') || './data'),
      envFile,
      write,
      env: {
        endpoint: get('SVC_BACKUP_S3_ENDPOINT'),
        region: get('SVC_BACKUP_S3_REGION') ?? get('AWS_REGION'),
        accessKey: get('AWS_ACCESS_KEY_ID'),
        secretKey: get('AWS_SECRET_ACCESS_KEY'),
        passphrase: get('SVC_BACKUP_PASSPHRASE'),
        identityFile: o.identity ?? get('SVC_BACKUP_AGE_IDENTITY_FILE'),
      },
    });
  }
  const file = o.file;
  if (await daemonAnswers(client.url)) {
    throw new CliError(
      `a svc daemon answers at ${client.url}; restore through it instead: import the archive with POST /api/backups/import, ` +
        'then svc restore ID (or "Restore" on /backups), or stop the daemon and run svc restore FILE again',
    );
  }
  const envFile = resolve('.env');
  const dataDir = resolve(process.env.SVC_DATA_DIR || readEnvFile(envFile).SVC_DATA_DIR || './data');
  try {
    const result = await restoreOffline({ archivePath: resolve(file), dataDir, envFile });
    for (const line of result.summary) process.stdout.write(line + '\n');
  } catch (err) {
    throw new CliError(`restore failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  return 0;
}
