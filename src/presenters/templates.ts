// The JSON of a stack template (docs/api.md "Stack templates"): what it is, what svc asks the user and what
// it generates; the detail adds the Compose file itself.
import type { StackTemplate } from '../stacks/templates.js';
import { z } from 'zod';

const text = z.string().nullable();
/** A template as GET /api/templates lists it (schemas for the OpenAPI document). */
export const templateSummaryJsonSchema = z
  .object({
    name: z.string(), title: z.string(), description: z.string(), website: text, category: z.string(), services: z.array(z.string()).describe("The Compose services' names, in depends_on order"),
    inputs: z.array(z.object({ name: z.string(), title: z.string(), description: text, kind: z.string(), required: z.boolean(), default: z.unknown() })),
    generated: z.array(z.object({ name: z.string(), description: text, alphabet: z.string(), length: z.number().int().nullable(), bytes: z.number().int().nullable() })),
  })
  .meta({ id: 'StackTemplateSummary' });
export const templateJsonSchema = templateSummaryJsonSchema.extend({ compose: z.string().describe('The Compose file') }).meta({ id: 'StackTemplate' });

export function templateSummaryJson(t: StackTemplate) {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    website: t.website ?? null,
    category: t.category,
    services: t.services,
    inputs: t.inputs.map((i) => ({ name: i.name, title: i.title, description: i.description ?? null, kind: i.kind, required: i.required, default: i.default ?? null })),
    generated: t.generated.map((g) => ({ name: g.name, description: g.description ?? null, alphabet: g.alphabet, length: g.length ?? null, bytes: g.bytes ?? null })),
  };
}

export function templateJson(t: StackTemplate) {
  return { ...templateSummaryJson(t), compose: t.compose };
}
