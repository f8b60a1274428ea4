// Checks an API answer against the OpenAPI document (issue 34): the operation must list the status, and a
// JSON body must match that status's schema. test/support/api.ts runs it on every answer its tests get, so
// a presenter that grows a field the document does not have (or a route that answers an undeclared
// status) fails the test that saw it, with the route and the schema's complaint.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { paramsOf } from '../../src/http/route-match.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: unknown };

export class OpenApiMismatch extends Error {}

export function openApiChecker(loadDoc: () => Promise<Doc>) {
  let ready: Promise<{ doc: Doc; ajv: Ajv2020; patterns: { hono: string; path: string; params: number }[] }> | undefined;
  const validators = new Map<string, ValidateFunction>();
  const load = () =>
    (ready ??= loadDoc().then((doc) => {
      const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
      ajv.addSchema({ $id: 'openapi.json', components: doc.components });
      const patterns = Object.keys(doc.paths).map((path) => ({ path, hono: path.replace(/\{([^}]+)\}/g, ':$1'), params: (path.match(/\{/g) ?? []).length }));
      return { doc, ajv, patterns: patterns.sort((a, b) => a.params - b.params) };
    }));

  /** Throws OpenApiMismatch when the answer is not one the document describes. */
  return async function check(method: string, url: string, status: number, contentType: string | null, body: unknown): Promise<void> {
    const path = url.split('?')[0];
    if (!path.startsWith('/api/') && path !== '/metrics') return;
    const { doc, ajv, patterns } = await load();
    const m = method.toLowerCase();
    const found = patterns.find((p) => doc.paths[p.path][m] && paramsOf(p.hono, path));
    // No such route (the API's own 404, or the auth wall's 401/403 in front of it): nothing to check here;
    // a registered route missing from the document fails test/unit/api/openapi.test.ts instead.
    if (!found) return;
    const where = `${method} ${found.path}`;
    const response = doc.paths[found.path][m].responses[String(status)];
    if (!response) throw new OpenApiMismatch(`${where} answered ${status}, a status its OpenAPI operation does not list (${Object.keys(doc.paths[found.path][m].responses).join(', ')})`);
    const schema = response.content?.['application/json']?.schema;
    if (!schema || !contentType?.includes('json') || body === null) return;
    const key = `${where} ${status}`;
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/')));
      validators.set(key, validate);
    }
    if (!validate(body)) {
      const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
      throw new OpenApiMismatch(`${where} ${status}: the answer does not match its OpenAPI schema:\n  ${errors.join('\n  ')}\n  body: ${JSON.stringify(body).slice(0, 400)}`);
    }
  };
}
