// `svc services`, `svc deploys APP` and `svc tokens`: listings a Heroku or Render user looks for first
// (`heroku addons`, `heroku releases`, `heroku authorizations`), thin reads of GET /api/services,
// GET /api/apps/{id}/deploys and GET /api/tokens; `--json` prints the answer as is.
import { appByName, type Client } from './client.js';
import { formatTable } from './apps.js';
import { printJson } from './output.js';

type Write = (s: string) => void;
const stdout: Write = (s) => void process.stdout.write(s);

interface ServiceJson { name: string; type: string; version: string; image_ref: string; status: string; linked_apps: string[] }
interface DeployJson { id: number; status: string; image_ref: string; origin?: string | null; created_at: string; error?: string | null }
interface TokenJson { id: number; name: string; scopes: string[]; expires_at: string | null; created_at: string; last_used_at: string | null }

export async function servicesCommand(client: Client, o: { json?: boolean }, write: Write = stdout): Promise<number> {
  const list = await client.json<ServiceJson[]>('GET', '/api/services');
  if (o.json) return printJson(list, write), 0;
  write(list.length === 0 ? 'no services\n' : formatTable([['NAME', 'TYPE', 'VERSION', 'STATUS', 'IMAGE', 'APPS'], ...list.map((s) => [s.name, s.type, s.version, s.status, s.image_ref, s.linked_apps.join(',') || '-'])]));
  return 0;
}

export async function deploysCommand(client: Client, o: { app: string; json?: boolean }, write: Write = stdout): Promise<number> {
  const app = await appByName(client, o.app);
  const list = await client.json<DeployJson[]>('GET', `/api/apps/${app.id}/deploys`);
  if (o.json) return printJson(list, write), 0;
  write(
    list.length === 0
      ? 'no deploys\n'
      : formatTable([['ID', 'STATUS', 'IMAGE', 'ORIGIN', 'CREATED'], ...list.map((d) => [String(d.id), d.status, d.image_ref, d.origin ?? '-', d.created_at])]),
  );
  return 0;
}

export async function tokensCommand(client: Client, o: { json?: boolean }, write: Write = stdout): Promise<number> {
  const list = await client.json<TokenJson[]>('GET', '/api/tokens');
  if (o.json) return printJson(list, write), 0;
  write(
    list.length === 0
      ? 'no API tokens\n'
      : formatTable([['ID', 'NAME', 'SCOPES', 'EXPIRES', 'LAST USED'], ...list.map((t) => [String(t.id), t.name, t.scopes.join(','), t.expires_at ?? 'never', t.last_used_at ?? '-'])]),
  );
  return 0;
}
