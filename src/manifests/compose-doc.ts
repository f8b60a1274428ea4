// A Compose file given where manifests are expected (`svc apply -f docker-compose.yml`, issue 32): a YAML
// file with a top-level `services:` map and no `kind:` is not a manifest but the Compose file of a stack,
// and becomes one `kind: Stack` document named after its folder (or the name given). Pure: text in, text out.
import { createRequire } from 'node:module';
import { API_VERSION } from './schema.js';

let yaml: typeof import('yaml') | undefined;
const loadYaml = () => (yaml ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));

/** True when `text` is one YAML document that is a Compose file rather than a manifest. */
export function isComposeText(text: string): boolean {
  let docs;
  try {
    docs = loadYaml().parseAllDocuments(text);
  } catch {
    return false;
  }
  const list = (Array.isArray(docs) ? docs : [docs]).filter((d) => d.contents !== null);
  if (list.length !== 1 || list[0]!.errors.length > 0) return false;
  const value = list[0]!.toJS({ maxAliasCount: 100 }) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  return !('kind' in o) && !('apiVersion' in o) && typeof o.services === 'object' && o.services !== null && !Array.isArray(o.services);
}

/**
 * The stack name a folder gives, the way Compose names a project after its directory: lower case, anything
 * but a-z, 0-9 and `-` made a `-`, at most 40 characters; undefined when nothing usable is left.
 */
export function stackNameOf(folder: string): string | undefined {
  const name = folder.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-+/, '').slice(0, 40).replace(/-+$/, '');
  return /^[a-z0-9]/.test(name) ? name : undefined;
}

/** The Stack document of a Compose file, as YAML text (JSON is YAML): the manifest apply reads it like any other. */
export function composeAsStackDoc(name: string, compose: string): string {
  return JSON.stringify({ apiVersion: API_VERSION, kind: 'Stack', metadata: { name }, spec: { compose } }, null, 2) + '\n';
}
