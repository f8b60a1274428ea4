// The OpenAPI 3.1 document of the API (issue 34), built from the routes themselves: hono-openapi walks the
// registered routes and their `describeRoute` middlewares (./operation.ts), and this file adds what the
// permission table (src/auth/permissions.ts) knows: who may call each operation, with which credential,
// and the errors that follow from it. Built on the first request and kept (it is the same until a restart).
import type { Hono } from 'hono';
import { generateSpecs } from 'hono-openapi';
import { ACTIONS, decide, ROLE_ACTIONS, ROLES, ruleFor, type Action } from '../../auth/permissions.js';

/** The parts of an OpenAPI operation this file reads or adds (the rest passes through as generated). */
export type Operation = { description?: string; requestBody?: unknown; responses?: Record<string, unknown>; security?: Record<string, string[]>[]; [k: string]: unknown };
export type OpenApiDocument = { openapi: string; info: Record<string, unknown>; components?: Record<string, Record<string, unknown>>; paths: Record<string, Record<string, Operation>> };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The scopes a token may carry to be let through `action` (its user's role applies too). */
const SAMPLE_APP = 'some-app';
function scopesFor(action: Action): string[] {
  return ['read', 'admin', `deploy:${SAMPLE_APP}`]
    .filter((s) => decide({ role: 'owner', apps: null, scopes: [s] }, action, SAMPLE_APP).ok)
    .map((s) => s.replace(SAMPLE_APP, '<app>'));
}
const rolesFor = (action: Action) => ROLES.filter((r) => ROLE_ACTIONS[r].has(action));

/** `/api/apps/{appID}` -> `/api/apps/:appID`, the permission table's key. */
export const honoPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

function withPermission(path: string, method: string, op: Operation): Operation {
  const rule = ruleFor(method.toUpperCase(), honoPath(path));
  const responses: Record<string, unknown> = { ...op.responses };
  // The `Error` component is there: routes' own errors (operation.ts) resolve the same schema.
  const add = (status: number, when: string) => {
    responses[status] ??= { description: when, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  };
  if (op.requestBody) {
    add(400, 'invalid_request: the body is not JSON or breaks a field rule (`details.issues` names the fields)');
    add(413, 'too_large: the body is over its limit');
  }
  if (path.includes('{')) add(404, 'not_found: no such record');
  add(500, 'internal: an unexpected failure (the daemon log has the detail)');
  if (!rule) return { ...op, responses };
  const permission = {
    action: rule.action,
    roles: rule.action === 'public' ? [] : rolesFor(rule.action),
    token_scopes: rule.action === 'public' ? [] : scopesFor(rule.action),
    per_app: rule.app !== undefined,
    audited: method !== 'get' || rule.auditRead === true,
  };
  let security: Record<string, string[]>[] = [];
  let said = 'Public: no credentials.';
  if (rule.action !== 'public') {
    add(401, 'unauthenticated: no session cookie or bearer token, or a wrong one');
    add(403, 'forbidden (role, app limits or token scope refuse it), csrf, totp_setup_required');
    security = [{ session: [] }, ...permission.token_scopes.map((s) => ({ token: [s] }))];
    said =
      `Permission \`${rule.action}\`: roles ${permission.roles.join(', ')}; token scopes ${permission.token_scopes.join(', ')}` +
      (permission.per_app ? '; limited to the app it names (an app-limited user, a `deploy:<app>` token).' : '.');
  }
  const description = [said, op.description].filter(Boolean).join('\n\n');
  return { ...op, description, security, responses, 'x-svc-permission': permission };
}

const SECURITY_SCHEMES = {
  session: {
    type: 'apiKey' as const,
    in: 'cookie' as const,
    name: 'session',
    description: 'The browser session of POST /api/auth/login. A request that changes state must also send Content-Type: application/json or a same-origin Origin header (CSRF).',
  },
  token: {
    type: 'http' as const,
    scheme: 'bearer',
    description: 'An API token (POST /api/tokens) with its scopes: `read`, `admin` (all of its user\'s rights) or `deploy:<app>`. Each operation lists the scopes that let it through; the user\'s role applies too.',
  },
};

const TAG_ORDER = ['Authentication', 'Account', 'Apps', 'Deploys', 'Environment', 'Logs', 'Services', 'Jobs', 'Terminal', 'Metrics', 'Backups', 'Manifests', 'Stacks', 'Code host', 'Webhooks', 'Notifications', 'Registries', 'Nodes', 'Teams', 'Audit', 'Reference'];

/** The document of every route of `api` that carries a `describeRoute`. */
export async function buildOpenApiDocument(api: Hono<any>, version: string): Promise<OpenApiDocument> {
  const spec = (await generateSpecs(api, {
    // `/api/openapi.json` itself ends like a static file: keep it.
    excludeStaticFile: false,
    documentation: {
      openapi: '3.1.0',
      info: {
        title: 'svc API',
        version,
        description:
          'The REST API of svc. Behaviour, ordering and guarantees a schema cannot say are in docs/api.md; the actions, roles and scopes in docs/api.md "Teams". ' +
          `Each operation's \`x-svc-permission\` names its action (one of ${ACTIONS.join(', ')}), the roles that have it and the token scopes that allow it.`,
      },
      components: { securitySchemes: SECURITY_SCHEMES },
      // The reference's order: what a newcomer looks for first.
      tags: TAG_ORDER.map((name) => ({ name })),
    },
  })) as unknown as OpenApiDocument;
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) item[method] = withPermission(path, method, op);
    }
  }
  return spec;
}
