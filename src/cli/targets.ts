// `svc target list | add | test | remote | remove` (thin calls of /api/backup-targets). `add` takes the keys
// from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, never from an argument (arguments show in `ps`).
import { CliError, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

interface TargetJson {
  id: number;
  name: string;
  endpoint: string | null;
  region: string;
  bucket: string;
  prefix: string;
}

export async function targetCommand(
  client: Client,
  o: { action?: string; name?: string; endpoint?: string; region?: string; bucket?: string; prefix?: string; json?: boolean },
  write: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  const byName = async (): Promise<TargetJson> => {
    if (!o.name) throw new CliError(`usage: svc target ${o.action} NAME`, 2);
    const t = (await client.json<TargetJson[]>('GET', '/api/backup-targets')).find((x) => x.name === o.name);
    if (!t) throw new CliError(`no backup target named ${o.name}`);
    return t;
  };
  switch (o.action) {
    case 'list': {
      const list = await client.json<TargetJson[]>('GET', '/api/backup-targets');
      if (o.json) return printJson(list, write), 0;
      if (list.length === 0) write('no backup targets\n');
      else write(formatTable([['NAME', 'ENDPOINT', 'REGION', 'BUCKET', 'PREFIX'], ...list.map((t) => [t.name, t.endpoint ?? '(AWS)', t.region, t.bucket, t.prefix])]));
      return 0;
    }
    case 'add': {
      if (!o.name || !o.bucket) throw new CliError('usage: svc target add NAME --bucket B [--endpoint URL] [--region R] [--prefix P]', 2);
      const access_key = process.env.AWS_ACCESS_KEY_ID;
      const secret_key = process.env.AWS_SECRET_ACCESS_KEY;
      if (!access_key || !secret_key) throw new CliError('set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for the target\'s keys');
      const t = await client.json<TargetJson>('POST', '/api/backup-targets', {
        name: o.name,
        bucket: o.bucket,
        endpoint: o.endpoint ?? null,
        ...(o.region ? { region: o.region } : {}),
        ...(o.prefix ? { prefix: o.prefix } : {}),
        access_key,
        secret_key,
      });
      write(`backup target ${t.name} added (s3://${t.bucket}/${t.prefix}); run svc target test ${t.name}\n`);
      return 0;
    }
    case 'test': {
      const t = await byName();
      // 502 (the store refused) is a CliError with the store's own words.
      const r = await client.json<{ duration_ms: number }>('POST', `/api/backup-targets/${t.id}/test`);
      write(`target ${t.name}: wrote, read back and deleted a test object in ${r.duration_ms} ms\n`);
      return 0;
    }
    case 'remote': {
      const t = await byName();
      const list = await client.json<{ key: string; size_bytes: number; last_modified: string | null }[]>('GET', `/api/backup-targets/${t.id}/remote`);
      if (o.json) return printJson(list, write), 0;
      if (list.length === 0) write('no copies\n');
      else write(formatTable([['KEY', 'SIZE', 'MODIFIED'], ...list.map((x) => [x.key, String(x.size_bytes), x.last_modified ?? ''])]));
      return 0;
    }
    case 'remove': {
      const t = await byName();
      await client.json('DELETE', `/api/backup-targets/${t.id}`);
      write(`backup target ${t.name} removed (its copies stay in the bucket)\n`);
      return 0;
    }
  }
  throw new CliError(`unknown target action "${o.action ?? ''}"; use list, add, test, remote or remove`, 2);
}
