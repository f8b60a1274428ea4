// What a route tells the OpenAPI document (issue 34): one `describeRoute` middleware next to the handler,
// built from the zod schemas the commands already validate with and the presenters' response schemas.
// The permission, the security schemes and the errors every route shares are added from the permission
// table when the document is built (./document.ts), so a route says only what is its own.
import { describeRoute, resolver } from 'hono-openapi';
import type { MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { errorJsonSchema } from '../../presenters/error-json.js';

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 502 | 503;

/** A non-JSON body: its media type and what it is. */
export interface Media {
  type: string;
  description: string;
}

export interface OperationSpec {
  summary: string;
  description?: string;
  /** The JSON request body (the command's input schema). */
  body?: z.ZodType;
  /** A request body that is not JSON (an archive upload). */
  bodyMedia?: Media;
  /** Query parameters: name -> what it does. */
  query?: Record<string, string>;
  /** The success status; 200 by default. */
  status?: number;
  /** The JSON answer; neither this nor `media`: an empty answer (204, 202). */
  response?: z.ZodType;
  /** An answer that is not JSON (a stream, an archive, Prometheus text). */
  media?: Media;
  /** Other success answers: status -> what it means and its JSON shape (the same as `response` when absent). */
  more?: Record<number, { description: string; response?: z.ZodType }>;
  /** Errors beyond the shared ones (401/403 for non-public routes, 404 with a path id, 400/413 with a body): status -> when. */
  errors?: Partial<Record<ErrorStatus, string>>;
}

const json = (schema: z.ZodType) => ({ 'application/json': { schema: resolver(schema) } });

/** An error response: the shared `Error` shape, `when` naming the codes. */
export const errorResponse = (when: string) => ({ description: when, content: json(errorJsonSchema) });

/** `describeRoute` for one route, tagged with its resource (`tag`: the heading in the reference). */
export function operations(tag: string): (spec: OperationSpec) => MiddlewareHandler {
  return (spec) => {
    const ok = spec.status ?? 200;
    const success = spec.response
      ? { description: 'Success', content: json(spec.response) }
      : spec.media
        ? { description: spec.media.description, content: { [spec.media.type]: { schema: { type: 'string' as const } } } }
        : { description: 'Success, no body' };
    const more = Object.fromEntries(
      Object.entries(spec.more ?? {}).map(([status, m]) => [status, { description: m.description, content: json((m.response ?? spec.response)!) }]),
    );
    const errors = Object.fromEntries(Object.entries(spec.errors ?? {}).map(([status, when]) => [status, errorResponse(when)]));
    const requestBody = spec.body
      ? { required: false, content: json(spec.body) }
      : spec.bodyMedia
        ? { required: true, description: spec.bodyMedia.description, content: { [spec.bodyMedia.type]: { schema: { type: 'string' as const, format: 'binary' } } } }
        : undefined;
    const parameters = Object.entries(spec.query ?? {}).map(([name, description]) => ({ name, in: 'query' as const, required: false, description, schema: { type: 'string' as const } }));
    return describeRoute({
      tags: [tag],
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: { [ok]: success, ...more, ...errors },
    });
  };
}
