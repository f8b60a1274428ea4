// Validation against the Compose Specification's own JSON schema (compose-spec.json, vendored unchanged from
// github.com/compose-spec/compose-spec schema/compose-spec.json at commit
// 170098ba07d9f53c383a41bfd4c5166b0a4529a6, 2026-06-23), with ajv, compiled once on first use. ajv's errors
// become ComposeProblems that name the service and the dotted key.
import ajvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import spec from './compose-spec.json' with { type: 'json' };
import type { ComposeProblem } from '../model.js';

export const composeSpec = spec as { properties: Record<string, unknown>; definitions: Record<string, { properties?: Record<string, unknown> }> };

let validate: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (!validate) {
    // The schema declares draft-07 by an https URL ajv does not know, and uses `deprecated` (a later draft's
    // annotation): strict mode off, `$schema` dropped, nothing else touched.
    const { $schema: _ignored, ...schema } = spec as Record<string, unknown>;
    const Ajv = ajvModule.default;
    validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  }
  return validate;
}

/** A JSON-pointer path as the problem's service and dotted key: /services/web/ports/0 -> web, ports[0]. */
export function problemAt(path: (string | number)[], message: string): ComposeProblem {
  const inService = path[0] === 'services' && path.length >= 2;
  const rest = inService ? path.slice(2) : path;
  const key = rest.reduce<string>((k, p) => (typeof p === 'number' ? `${k}[${p}]` : k ? `${k}.${p}` : p), '');
  return inService ? { service: String(path[1]), key: key || 'services', message } : { key: key || 'services', message };
}

const pointer = (instancePath: string): (string | number)[] =>
  instancePath === '' ? [] : instancePath.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).map((p) => (/^\d+$/.test(p) ? Number(p) : p));

/** Problems of a file the schema refuses, at most one per path (the most telling of ajv's), deepest first dropped into order. */
export function schemaProblems(doc: unknown): ComposeProblem[] {
  const check = validator();
  if (check(doc)) return [];
  const byPath = new Map<string, ErrorObject>();
  const rank = (e: ErrorObject) => (e.keyword === 'additionalProperties' ? 0 : e.keyword === 'enum' || e.keyword === 'required' ? 1 : e.keyword === 'oneOf' || e.keyword === 'anyOf' ? 3 : 2);
  for (const e of check.errors ?? []) {
    const at = e.keyword === 'additionalProperties' ? `${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}` : e.instancePath;
    const had = byPath.get(at);
    if (!had || rank(e) < rank(had)) byPath.set(at, e);
  }
  // A path whose child is also wrong says less than the child: keep the deepest.
  const paths = [...byPath.keys()];
  const problems: ComposeProblem[] = [];
  for (const [at, e] of byPath) {
    if (paths.some((p) => p !== at && p.startsWith(`${at}/`))) continue;
    const message =
      e.keyword === 'additionalProperties'
        ? 'is not a Compose key'
        : e.keyword === 'enum'
          ? `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
          : (e.message ?? 'is not valid');
    problems.push(problemAt(pointer(at), `${message} (compose-spec schema)`));
  }
  return problems.slice(0, 20);
}
