// `svc templates [NAME] [--json]` (a thin call of GET /api/templates): the one-click stacks svc ships; with
// NAME, what the template asks, what it generates and its services.
import { formatTable } from './apps.js';
import type { Client } from './client.js';
import { printJson } from './output.js';

type Write = (s: string) => void;
const stdout: Write = (s) => void process.stdout.write(s);

interface TemplateJson {
  name: string;
  title: string;
  description: string;
  website: string | null;
  category: string;
  services: string[];
  inputs: { name: string; title: string; kind: string; required: boolean; default: string | null }[];
  generated: { name: string; description: string | null; alphabet: string; length: number | null; bytes: number | null }[];
}

export async function templatesCommand(client: Client, o: { name?: string; json?: boolean }, write: Write = stdout): Promise<number> {
  if (o.name === undefined) {
    const list = await client.json<TemplateJson[]>('GET', '/api/templates');
    if (o.json) return printJson(list, write), 0;
    write(formatTable([['NAME', 'TITLE', 'CATEGORY', 'SERVICES'], ...list.map((t) => [t.name, t.title, t.category, t.services.join(',')])]));
    return 0;
  }
  const t = await client.json<TemplateJson>('GET', `/api/templates/${encodeURIComponent(o.name)}`);
  if (o.json) return printJson(t, write), 0;
  const lines = [`${t.title} (${t.name}, ${t.category})`, t.description];
  if (t.website) lines.push(t.website);
  lines.push(`services: ${t.services.join(', ')}`);
  lines.push('asks:');
  for (const i of t.inputs) lines.push(`  ${i.name}  ${i.title} (${i.kind}${i.default !== null ? `, default ${i.default}` : i.required ? ', required' : ', optional'})`);
  if (t.inputs.length === 0) lines.push('  nothing');
  lines.push('generates:');
  for (const g of t.generated) lines.push(`  ${g.name}  ${g.length !== null ? `${g.length} characters` : `${g.bytes} random bytes`}, ${g.alphabet}${g.description ? ` (${g.description})` : ''}`);
  if (t.generated.length === 0) lines.push('  nothing');
  write(lines.join('\n') + '\n');
  return 0;
}
