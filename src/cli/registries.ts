// `svc registry list | add SERVER --username U [--password-stdin] | test SERVER | remove SERVER` (thin calls
// of /api/registries). The password or token comes from stdin (`--password-stdin`, as `docker login`
// takes it) or SVC_REGISTRY_PASSWORD, never from an argument (arguments show in `ps`).
import { text } from 'node:stream/consumers';
import { CliError, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';
import { canonicalRegistry } from '../runtime/references.js';

interface RegistryJson {
  id: number;
  server: string;
  username: string;
  updated_at: string;
}

export async function registryCommand(
  client: Client,
  o: { action?: string; server?: string; username?: string; passwordStdin?: boolean; json?: boolean },
  write: (s: string) => void = (s) => process.stdout.write(s),
  stdin: () => Promise<string> = () => text(process.stdin),
): Promise<number> {
  const byServer = async (): Promise<RegistryJson> => {
    if (!o.server) throw new CliError(`usage: svc registry ${o.action} SERVER`, 2);
    const want = canonicalRegistry(o.server); // as the API stores it: lowercase, Docker Hub's names folded
    const x = (await client.json<RegistryJson[]>('GET', '/api/registries')).find((r) => r.server === want);
    if (!x) throw new CliError(`no credentials for registry ${o.server}`);
    return x;
  };
  switch (o.action) {
    case 'list': {
      const list = await client.json<RegistryJson[]>('GET', '/api/registries');
      if (o.json) return printJson(list, write), 0;
      if (list.length === 0) write('no registry credentials\n');
      else write(formatTable([['REGISTRY', 'USERNAME', 'CHANGED'], ...list.map((x) => [x.server, x.username, x.updated_at])]));
      return 0;
    }
    case 'add': {
      if (!o.server || !o.username) throw new CliError('usage: svc registry add SERVER --username U [--password-stdin]', 2);
      const password = o.passwordStdin ? (await stdin()).replace(/\r?\n$/, '') : process.env.SVC_REGISTRY_PASSWORD;
      if (!password) throw new CliError('give the password or token on stdin with --password-stdin, or in SVC_REGISTRY_PASSWORD');
      const x = await client.json<RegistryJson>('POST', '/api/registries', { server: o.server, username: o.username, password });
      write(`credentials for ${x.server} added; run svc registry test ${x.server}\n`);
      return 0;
    }
    case 'test': {
      const x = await byServer();
      // 502 (the registry refused the login) is a CliError with the registry's own words.
      const r = await client.json<{ status: string }>('POST', `/api/registries/${x.id}/test`);
      write(`${x.server}: ${r.status}\n`);
      return 0;
    }
    case 'remove': {
      const x = await byServer();
      await client.json('DELETE', `/api/registries/${x.id}`);
      write(`credentials for ${x.server} removed\n`);
      return 0;
    }
  }
  throw new CliError(`unknown registry action "${o.action ?? ''}"; use list, add, test or remove`, 2);
}
