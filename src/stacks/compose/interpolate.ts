// Compose interpolation (compose-spec 12-interpolation.md): `${VAR}`, `$VAR`, `${VAR:-default}`,
// `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}`, nested defaults, and `$$`
// for a literal dollar. Applied to every string value of the file (never to keys), before schema validation,
// as Compose does. An unset variable without a default becomes '' with a warning; `:?`/`?` make it an error.

const NAME = /^[_a-zA-Z][_a-zA-Z0-9]*/;

export class InterpolationError extends Error {}

export interface Interpolation {
  variables: Record<string, string>;
  /** Names used but not set (and without a default): Compose warns and substitutes ''. */
  unset: Set<string>;
}

/** One string with every substitution done; throws InterpolationError on `:?`/`?` or a malformed `${...}`. */
export function interpolateString(text: string, ctx: Interpolation): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '$') {
      out += c;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (next === '{') {
      const end = closingBrace(text, i + 2);
      if (end < 0) throw new InterpolationError(`invalid interpolation format in "${text}": no closing brace`);
      out += substitute(text.slice(i + 2, end), ctx, text);
      i = end + 1;
      continue;
    }
    const name = NAME.exec(text.slice(i + 1));
    if (name) {
      out += lookup(name[0], ctx);
      i += 1 + name[0].length;
      continue;
    }
    // A `$` that starts no variable is kept as it is (compose-spec: "preserved without attempt to interpolate").
    out += '$';
    i++;
  }
  return out;
}

/** Index of the `}` closing a `${` whose body starts at `from`, counting nested `${...}`. */
function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let j = from; j < text.length; j++) {
    if (text[j] === '$' && text[j + 1] === '$') {
      j++;
    } else if (text[j] === '$' && text[j + 1] === '{') {
      depth++;
      j++;
    } else if (text[j] === '}') {
      depth--;
      if (depth === 0) return j;
    }
  }
  return -1;
}

function lookup(name: string, ctx: Interpolation): string {
  const value = ctx.variables[name];
  if (value === undefined) {
    ctx.unset.add(name);
    return '';
  }
  return value;
}

function substitute(body: string, ctx: Interpolation, whole: string): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw new InterpolationError(`invalid interpolation format in "${whole}": "\${${body}}" does not start with a variable name`);
  const rest = body.slice(name.length);
  if (rest === '') return lookup(name, ctx);
  const op = /^(:-|-|:\?|\?|:\+|\+)/.exec(rest)?.[0];
  if (!op) throw new InterpolationError(`invalid interpolation format in "${whole}": unexpected "${rest}" after ${name}`);
  const arg = () => interpolateString(rest.slice(op.length), ctx);
  const value = ctx.variables[name];
  const set = value !== undefined;
  const nonEmpty = set && value !== '';
  switch (op) {
    case ':-':
      return nonEmpty ? value : arg();
    case '-':
      return set ? value : arg();
    case ':?':
      if (!nonEmpty) throw new InterpolationError(`required variable ${name} is missing a value: ${arg() || `${name} is required`}`);
      return value;
    case '?':
      if (!set) throw new InterpolationError(`required variable ${name} is missing a value: ${arg() || `${name} is required`}`);
      return value;
    case ':+':
      return nonEmpty ? arg() : '';
    default: // '+'
      return set ? arg() : '';
  }
}

/** Where a value sits in the file, for problems: ['services', 'web', 'ports', 0]. */
export type ValuePath = (string | number)[];

/**
 * Every string value of a parsed YAML tree interpolated (keys untouched). Errors are collected with their path
 * rather than thrown, so one load names every broken value.
 */
export function interpolateTree(tree: unknown, ctx: Interpolation, errors: { path: ValuePath; message: string }[], path: ValuePath = []): unknown {
  if (typeof tree === 'string') {
    try {
      return interpolateString(tree, ctx);
    } catch (e) {
      if (!(e instanceof InterpolationError)) throw e;
      errors.push({ path, message: e.message });
      return tree;
    }
  }
  if (Array.isArray(tree)) return tree.map((v, i) => interpolateTree(v, ctx, errors, [...path, i]));
  if (tree !== null && typeof tree === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(tree)) out[k] = interpolateTree(v, ctx, errors, [...path, k]);
    return out;
  }
  return tree;
}
