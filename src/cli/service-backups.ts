// `svc services backup|backups|restore|download|schedule NAME ...` (issue 33 section 3): thin calls of
// /api/services/{id}/backups, .../restore and .../backup. `backup` and `restore` wait for the outcome
// (the API's default) and exit 1 when it failed; `download` writes the gzip'd dump a user loads by hand.
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CliError, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

interface ServiceJson {
  id: number;
  name: string;
}
interface BackupJson {
  id: number;
  filename: string;
  status: string;
  trigger: string;
  version: string;
  size_bytes: number | null;
  remote_status: string;
  error: string | null;
  created_at: string;
}
interface RestoreAnswer {
  restore: { id: number; status: string; error: string | null; safety_backup_id: number | null };
  service: { name: string };
  error?: string;
}

type Write = (s: string) => void;
const stdout: Write = (s) => process.stdout.write(s);
const ID = /^[1-9][0-9]*$/;

export interface ServiceBackupOptions {
  action: string;
  name?: string;
  id?: string;
  into?: string;
  fullBackup?: string;
  output?: string;
  every?: string;
  retain?: string;
  json?: boolean;
}

export async function serviceBackupCommand(client: Client, o: ServiceBackupOptions, write: Write = stdout): Promise<number> {
  if (!o.name) throw new CliError(`usage: svc services ${o.action} NAME${o.action === 'restore' || o.action === 'download' ? ' BACKUP_ID' : ''}`, 2);
  const service = (await client.json<ServiceJson[]>('GET', '/api/services')).find((s) => s.name === o.name);
  if (!service) throw new CliError(`no service named ${o.name}`);
  const base = `/api/services/${service.id}`;
  const backupId = () => {
    if (!o.id || !ID.test(o.id)) throw new CliError(`usage: svc services ${o.action} NAME BACKUP_ID`, 2);
    return Number(o.id);
  };
  switch (o.action) {
    case 'backups': {
      const list = await client.json<BackupJson[]>('GET', `${base}/backups`);
      if (o.json) return printJson(list, write), 0;
      write(
        list.length === 0
          ? `no backups of ${o.name}\n`
          : formatTable([['ID', 'STATUS', 'TRIGGER', 'VERSION', 'SIZE', 'OFF-HOST', 'CREATED'], ...list.map((b) => [String(b.id), b.status, b.trigger, b.version, b.size_bytes === null ? '-' : String(b.size_bytes), b.remote_status, b.created_at])]),
      );
      return 0;
    }
    case 'backup': {
      const b = await client.json<BackupJson>('POST', `${base}/backups`);
      if (o.json) return printJson(b, write), 0;
      write(`backup ${b.id} of ${o.name}: ${b.status} ${b.filename}${b.size_bytes !== null ? ` (${b.size_bytes} bytes)` : ''}\n`);
      return b.status === 'completed' || b.status === 'running' ? 0 : 1;
    }
    case 'restore': {
      if (o.fullBackup !== undefined && !ID.test(o.fullBackup)) throw new CliError('--full-backup takes a backup id', 2);
      const source = o.fullBackup !== undefined && o.id === undefined ? { full_backup_id: Number(o.fullBackup) } : { backup_id: backupId() };
      const body = { ...source, ...(o.into ? { into: { name: o.into } } : {}) };
      const a = await client.json<RestoreAnswer>('POST', `${base}/restore`, body);
      if (o.json) return printJson(a, write), 0;
      const where = o.into ? `into the new service ${a.service.name}` : `into ${o.name}${a.restore.safety_backup_id ? ` (safety backup ${a.restore.safety_backup_id} taken first)` : ''}`;
      const what = 'full_backup_id' in source ? `the dump in full backup ${source.full_backup_id}` : `backup ${source.backup_id}`;
      write(`restore ${a.restore.id} of ${what} ${where}: ${a.restore.status}${a.restore.error ? `: ${a.restore.error}` : ''}\n`);
      return a.restore.status === 'failed' ? 1 : 0;
    }
    case 'download': {
      const res = await client.raw(`${base}/backups/${backupId()}/download`);
      const named = /filename="([^"/\\]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1];
      const target = resolve(o.output ?? named ?? `svc-${o.name}-${o.id}.gz`);
      if (!res.body) throw new CliError('the download was empty');
      await pipeline(Readable.fromWeb(res.body as never), createWriteStream(target, { mode: 0o600 }));
      write(`wrote ${target}\n`);
      return 0;
    }
    case 'schedule': {
      const num = (v: string | undefined, what: string) => {
        if (v === undefined) return undefined;
        if (!/^[0-9]{1,9}$/.test(v)) throw new CliError(`--${what} must be a whole number`, 2);
        return Number(v);
      };
      const body = Object.fromEntries(Object.entries({ interval_minutes: num(o.every, 'every'), retain: num(o.retain, 'retain') }).filter(([, v]) => v !== undefined));
      const p = await client.json<{ interval_minutes: number; retain: number }>(Object.keys(body).length ? 'PUT' : 'GET', `${base}/backup`, Object.keys(body).length ? body : undefined);
      if (o.json) return printJson(p, write), 0;
      write(`${o.name}: ${p.interval_minutes > 0 ? `a backup every ${p.interval_minutes} minutes` : 'no scheduled backups'}, the newest ${p.retain} kept\n`);
      return 0;
    }
  }
  throw new CliError(`unknown action "${o.action}"; use backup, backups, restore, download or schedule`, 2);
}
