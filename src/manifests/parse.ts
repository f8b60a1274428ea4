// Multi-document YAML to validated manifest documents. Pure: text in, documents and errors out. Every
// error names the file, the document's index in it (0-based, empty documents counted) and the field path
// (`spec.env.1.key`), so a person finds the line to fix. A file with any error yields no documents at all:
// the file is the unit of atomicity (API.md "Manifests").
import { createRequire } from 'node:module';
import { manifestDocSchema, type ManifestDoc } from './schema.js';

/** yaml is required (synchronously) at the first parse: a daemon with no manifest files never loads it. */
let yaml: typeof import('yaml') | undefined;
const loadYaml = () => (yaml ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));

export interface ManifestError {
  file: string;
  /** Index of the document in its file; -1 for errors about the file or the source as a whole. */
  document: number;
  path: string;
  message: string;
}

/** A valid document and where it came from. */
export interface SourcedDoc {
  file: string;
  document: number;
  doc: ManifestDoc;
}

export interface ParsedFile {
  file: string;
  docs: SourcedDoc[];
  errors: ManifestError[];
}

/** Files larger than this are refused: a manifest is a page of YAML, not a data dump. */
export const MAX_FILE_BYTES = 1024 * 1024;

export function parseManifestFile(file: string, text: string): ParsedFile {
  const errors: ManifestError[] = [];
  const docs: SourcedDoc[] = [];
  if (Buffer.byteLength(text, 'utf8') > MAX_FILE_BYTES) {
    return { file, docs, errors: [{ file, document: -1, path: '', message: `file is larger than ${MAX_FILE_BYTES} bytes` }] };
  }
  const parsed = loadYaml().parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true });
  const list = Array.isArray(parsed) ? parsed : [parsed];
  list.forEach((yamlDoc, index) => {
    if (yamlDoc.errors.length > 0) {
      for (const e of yamlDoc.errors) errors.push({ file, document: index, path: '', message: `invalid YAML: ${e.message.split('\n')[0]}` });
      return;
    }
    let value: unknown;
    try {
      value = yamlDoc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      errors.push({ file, document: index, path: '', message: `invalid YAML: ${err instanceof Error ? err.message : String(err)}` });
      return;
    }
    if (value === null || value === undefined) return; // an empty document (a trailing `---`, comments only)
    const result = manifestDocSchema.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues) {
        errors.push({ file, document: index, path: issue.path.join('.'), message: issue.message });
      }
      return;
    }
    docs.push({ file, document: index, doc: result.data });
  });
  return errors.length > 0 ? { file, docs: [], errors } : { file, docs, errors };
}

/**
 * parseManifestFile with a memory of the last pass: a file whose name and text did not change is not
 * parsed again (YAML parsing is most of a no-change re-apply). Only the files of the latest pass are kept.
 */
export function memoizedParser(): { parse: (file: string, text: string) => ParsedFile; endPass(): void } {
  let previous = new Map<string, ParsedFile & { text: string }>();
  let current = new Map<string, ParsedFile & { text: string }>();
  return {
    parse(file, text) {
      const hit = previous.get(file) ?? current.get(file);
      const result = hit && hit.text === text ? hit : { ...parseManifestFile(file, text), text };
      current.set(file, result);
      return result;
    },
    endPass() {
      previous = current;
      current = new Map();
    },
  };
}
