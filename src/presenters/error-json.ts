// The one error shape of every API answer that is not a success (docs/api.md "Errors"), as a schema the
// OpenAPI document publishes; src/http/errors.ts builds it.
import { z } from 'zod';

export const errorJsonSchema = z
  .object({
    error: z.string().describe('A sentence for a person.'),
    code: z.string().describe('The machine code (docs/api.md lists them): invalid_request, not_found, conflict, forbidden, csrf, ...'),
    details: z.record(z.string(), z.unknown()).optional().describe('More facts where there are: `issues` (field refusals) for invalid_request.'),
  })
  .meta({ id: 'Error' });
