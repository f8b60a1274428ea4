// Disaster recovery from a bucket alone: `svc restore s3://BUCKET/KEY` (or `s3://BUCKET/PREFIX/ --latest`)
// on a host with no daemon running: the copy is fetched, decrypted while it streams to one work file beside
// the data directory, then restored exactly as `svc restore FILE` (offline-restore.ts) does; the work file
// is removed either way. `svc restore --target NAME --latest` asks a running daemon instead: it imports the
// target's newest copy (POST /api/backup-targets/{id}/remote/import) and restores that backup.
import { createWriteStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { restoreOffline } from '../backup/offline-restore.js';
import type { AgeSecret } from '../offsite/age.js';
import { listRemote, openRemote } from '../offsite/remote.js';
import { s3ClientFor, storeReason } from '../offsite/s3.js';
import { CliError, type Client } from './client.js';

export interface RemoteRestoreEnv {
  endpoint?: string;
  region?: string;
  accessKey?: string;
  secretKey?: string;
  passphrase?: string;
  identityFile?: string;
}

/** `s3://bucket/key` -> its parts; anything else is a usage error. */
export function parseS3Url(url: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(.*)$/.exec(url);
  if (!m) throw new CliError(`not an s3:// URL: ${url} (expected s3://BUCKET/KEY or s3://BUCKET/PREFIX/ --latest)`, 2);
  return { bucket: m[1], key: m[2] };
}

async function secretOf(env: RemoteRestoreEnv): Promise<AgeSecret> {
  if (env.identityFile) {
    const text = await readFile(env.identityFile, 'utf8').catch(() => {
      throw new CliError(`cannot read the age identity file ${env.identityFile}`);
    });
    const line = text.split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'));
    if (!line) throw new CliError(`${env.identityFile} holds no AGE-SECRET-KEY- line`);
    return { identity: line.trim() };
  }
  if (env.passphrase) return { passphrase: env.passphrase };
  throw new CliError('set SVC_BACKUP_PASSPHRASE (or give -i IDENTITY_FILE for a copy encrypted to an age recipient)');
}

export async function restoreFromBucket(o: { url: string; latest: boolean; dataDir: string; envFile: string; env: RemoteRestoreEnv; write: (s: string) => void }): Promise<number> {
  const { bucket, key } = parseS3Url(o.url);
  const secret = await secretOf(o.env);
  if (!o.env.accessKey || !o.env.secretKey) throw new CliError('set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and SVC_BACKUP_S3_ENDPOINT for a store other than AWS)');
  const client = s3ClientFor({
    name: 'restore',
    endpoint: o.env.endpoint ?? null,
    region: o.env.region ?? 'us-east-1',
    bucket,
    prefix: '',
    accessKey: o.env.accessKey,
    secretKey: o.env.secretKey,
  });
  const work = join(dirname(o.dataDir), `.svc-restore-${randomBytes(4).toString('hex')}.tar.gz`);
  try {
    let objectKey = key;
    if (o.latest) {
      const copies = await listRemote(client, bucket, key).catch((err) => {
        throw new CliError(`cannot list s3://${bucket}/${key}: ${storeReason(err)}`);
      });
      if (copies.length === 0) throw new CliError(`no svc backup copy under s3://${bucket}/${key}`);
      objectKey = copies[0].key;
    }
    o.write(`fetching s3://${bucket}/${objectKey}\n`);
    let plain: ReadableStream<Uint8Array>;
    try {
      plain = await openRemote(client, bucket, objectKey, secret);
    } catch (err) {
      const sdk = (err as { $metadata?: unknown }).$metadata !== undefined;
      throw new CliError(sdk ? `cannot fetch s3://${bucket}/${objectKey}: ${storeReason(err)}` : `cannot decrypt s3://${bucket}/${objectKey}: ${(err as Error).message}`);
    }
    await pipeline(Readable.fromWeb(plain as never), createWriteStream(work, { mode: 0o600 })).catch((err) => {
      throw new CliError(`the copy did not decrypt whole (tampered or truncated): ${(err as Error).message}`);
    });
    const result = await restoreOffline({ archivePath: work, dataDir: o.dataDir, envFile: o.envFile }).catch((err) => {
      throw new CliError(`restore failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    for (const line of result.summary) o.write(line + '\n');
    return 0;
  } finally {
    client.destroy();
    await rm(work, { force: true });
  }
}

interface TargetJson {
  id: number;
  name: string;
}

/** `svc restore --target NAME --latest` through a running daemon: import the newest copy, then restore it. */
export async function restoreFromTarget(client: Client, name: string, restoreId: (backupId: string) => Promise<number>, write: (s: string) => void): Promise<number> {
  const targets = await client.json<TargetJson[]>('GET', '/api/backup-targets');
  const t = targets.find((x) => x.name === name);
  if (!t) throw new CliError(`no backup target named ${name}`);
  const copies = await client.json<{ key: string; filename: string }[]>('GET', `/api/backup-targets/${t.id}/remote`);
  if (copies.length === 0) throw new CliError(`target ${name} holds no svc backup copy`);
  write(`importing ${copies[0].key} from ${name}\n`);
  const backup = await client.json<{ id: number }>('POST', `/api/backup-targets/${t.id}/remote/import`, { key: copies[0].key });
  write(`imported as backup ${backup.id}\n`);
  return restoreId(String(backup.id));
}
