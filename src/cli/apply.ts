// `svc apply` and `svc diff`: read a manifest file or directory, send it to POST /api/manifests/apply as
// named files (each stays atomic, errors name it), print the plan. diff is a dry run whose exit status says
// whether anything would change (0 none, 1 changes, 2 errors), like diff(1).
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { readManifestDir } from '../manifests/dir.js';
import type { ApplyResult } from '../manifests/apply.js';
import { CliError, type Client } from './client.js';
import { waitForDeploys } from './apply-wait.js';

/** The files under PATH, named as the errors will name them. */
export function readPath(path: string): { name: string; content: string }[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new CliError(`${path}: no such file or directory`);
  }
  if (st.isFile()) return [{ name: basename(path), content: readFileSync(path, 'utf8') }];
  const dir = readManifestDir(path);
  if (dir.errors.length > 0) throw new CliError(`${dir.errors[0].file}: ${dir.errors[0].message}`);
  return dir.files.map((f) => ({ name: f.file, content: f.text }));
}

const SIGN = { create: '+', update: '~', delete: '-', unchanged: '=' } as const;

/** The plan as lines: changed resources in full, unchanged ones counted, then the errors. */
export function formatPlan(r: ApplyResult): string {
  const lines: string[] = [];
  for (const res of r.resources) {
    if (res.action === 'unchanged' && !res.note) continue;
    const said = [...(res.action === 'update' ? res.changes : []), ...(res.deploy ? [`deploy ${res.deploy}`] : [])];
    const changes = said.length > 0 ? `: ${said.join(', ')}` : '';
    lines.push(`${SIGN[res.action]} ${res.kind}/${res.name} ${res.action === 'unchanged' ? 'unchanged' : res.action}${changes}`);
    if (res.note) lines.push(`    note: ${res.note}`);
  }
  const unchanged = r.resources.filter((x) => x.action === 'unchanged' && !x.note).length;
  if (unchanged > 0) lines.push(`= ${unchanged} unchanged`);
  if (r.resources.length === 0) lines.push('no resources');
  for (const e of r.errors) {
    const where = [e.file || 'source', e.document >= 0 ? `document ${e.document}` : '', e.path].filter(Boolean).join(' ');
    lines.push(`error: ${where}: ${e.message}`);
  }
  if (r.dry_run) lines.push('(dry run: nothing changed)');
  return lines.join('\n') + '\n';
}

/**
 * Applies PATH and, unless `noWait`, waits for the deploys the apply queued: exit 1 when the answer has
 * errors or any of those deploys failed, so `svc apply` in a script or CI tells an app that did not come up.
 */
export async function applyCommand(client: Client, o: { path: string; dryRun: boolean; prune: boolean; pruneServices: boolean; noWait?: boolean; allowUpgrade?: boolean }): Promise<number> {
  const files = readPath(o.path);
  const result = await client.json<ApplyResult>('POST', '/api/manifests/apply', { files, dry_run: o.dryRun, prune: o.prune, prune_services: o.pruneServices, allow_upgrade: o.allowUpgrade ?? false });
  process.stdout.write(formatPlan(result));
  const failed = o.dryRun || o.noWait ? 0 : await waitForDeploys(client, result.resources, (line) => process.stdout.write(`${line}\n`));
  return result.errors.length > 0 || failed > 0 ? 1 : 0;
}

export async function diffCommand(client: Client, o: { path: string; prune: boolean }): Promise<number> {
  const files = readPath(o.path);
  const result = await client.json<ApplyResult>('POST', '/api/manifests/apply', { files, dry_run: true, prune: o.prune });
  process.stdout.write(formatPlan(result));
  if (result.errors.length > 0) return 2;
  return result.resources.some((r) => r.action !== 'unchanged') ? 1 : 0;
}
