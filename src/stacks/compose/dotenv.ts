// An `env_file` (and `label_file`) as Compose reads it (compose-spec 05-services.md "env_file format"):
// `KEY=VALUE` lines, `#` comments, an optional `export `, single quotes literal, double quotes with \n \t
// escapes and `${VAR}` interpolation, unquoted values trimmed, an inline ` #` comment ending an unquoted
// value, and a bare `KEY` taking its value from the stack's variables (left out when not set).
import { interpolateString, type Interpolation } from './interpolate.js';

export class DotenvError extends Error {}

export function parseDotenv(text: string, ctx: Interpolation): Record<string, string> {
  const out: Record<string, string> = {};
  // Later lines see earlier ones, as Compose's parser does.
  const scope: Interpolation = { variables: { ...ctx.variables }, unset: ctx.unset };
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([^=\s]+)\s*(?:=(.*))?$/s.exec(line);
    if (!m) throw new DotenvError(`line ${n + 1}: expected KEY=VALUE`);
    const key = m[1];
    if (m[2] === undefined) {
      const v = ctx.variables[key];
      if (v !== undefined) out[key] = scope.variables[key] = v;
      continue;
    }
    let raw = m[2].trim();
    let value: string;
    if (raw.startsWith("'")) {
      const end = raw.indexOf("'", 1);
      if (end < 0) throw new DotenvError(`line ${n + 1}: unclosed single quote`);
      value = raw.slice(1, end);
    } else if (raw.startsWith('"')) {
      // A double-quoted value may run over several lines.
      let end = closingQuote(raw);
      while (end < 0) {
        n++;
        if (n >= lines.length) throw new DotenvError('unclosed double quote');
        raw += '\n' + lines[n];
        end = closingQuote(raw);
      }
      const inner = raw.slice(1, end);
      value = interpolateString(inner.replace(/\\([nrt"\\])/g, (_, c: string) => ({ n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' })[c] ?? c), scope);
    } else {
      raw = raw.replace(/\s+#.*$/, '').trim();
      value = interpolateString(raw, scope);
    }
    out[key] = scope.variables[key] = value;
  }
  return out;
}

/** Index of the unescaped `"` closing a value that starts with `"`, or -1. */
function closingQuote(raw: string): number {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i] === '\\') i++;
    else if (raw[i] === '"') return i;
  }
  return -1;
}
