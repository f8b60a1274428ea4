// Reads which source files write which SQLite tables: drizzle's `.insert(t)`, `.update(t)`, `.delete(t)`
// on a table of src/store/schema, and raw SQL (`INSERT INTO t`, `UPDATE t SET`, `DELETE FROM t`). A raw
// statement whose table is computed (`DELETE FROM main.${name}`) is reported as table `*`. The layout test
// compares what it finds with its table of which folders may write which table; kept apart so it can be
// pointed at any tree (a fixture with a violation, an older checkout).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { sourceFiles } from './layout.js';

export interface TableWrite {
  /** The table's SQL name (`app_status`), or `*` for raw SQL whose table is computed. */
  table: string;
  /** The writing file, relative to the source directory (`observed/apps.ts`). */
  file: string;
  line: number;
  how: 'insert' | 'update' | 'delete' | 'sql';
}

const TABLE = /export const (\w+)\s*=\s*sqliteTable\(\s*'(\w+)'/g;
/** The drizzle tables under `schemaDir`: exported name (`appStatus`) -> SQL name (`app_status`). */
export function schemaTables(schemaDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of sourceFiles(schemaDir)) for (const m of readFileSync(f, 'utf8').matchAll(TABLE)) out.set(m[1], m[2]);
  return out;
}

const DRIZZLE = /\.(insert|update|delete)\(\s*(?:\w+\.)?(\w+)\s*\)/g;
const RAW = /\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+((?:\w+\.)?"?\$?\{?\w+)/g;

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/**
 * Every write to a table of `tables` (see schemaTables) in the files under `src`, except the schema
 * itself. Identifiers that are not tables (`.delete(key)` on a Map) are not writes and are skipped.
 */
export function tableWrites(src: string, tables: Map<string, string>): TableWrite[] {
  const sqlNames = new Set(tables.values());
  const out: TableWrite[] = [];
  for (const path of sourceFiles(src)) {
    const file = relative(src, path);
    if (file.startsWith('store/schema/')) continue;
    const text = readFileSync(path, 'utf8');
    for (const m of text.matchAll(DRIZZLE)) {
      const table = tables.get(m[2]);
      if (table) out.push({ table, file, line: lineOf(text, m.index), how: m[1] as TableWrite['how'] });
    }
    for (const m of text.matchAll(RAW)) {
      const name = m[1].replace(/^(main|snap)\./, '').replace(/"/g, '');
      const table = name.startsWith('$') ? '*' : sqlNames.has(name) ? name : undefined;
      if (table) out.push({ table, file, line: lineOf(text, m.index), how: 'sql' });
    }
  }
  return out;
}
