// The JSON of a stack template (docs/api.md "Stack templates"): what it is, what svc asks the user and what
// it generates; the detail adds the Compose file itself.
import type { StackTemplate } from '../stacks/templates.js';

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
