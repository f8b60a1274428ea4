// Deploying a one-click template (issue 32 section 3): a stack created from a template's Compose file, its
// variables the user's inputs (checked by kind) and a fresh value for each generated one, stored as secret
// variables so no password of the template is ever shown again. The same createStack as a pasted file, so
// the plan, the refusals and the deploy are the API's; a dry run plans with throwaway generated values.
import { z } from 'zod';
import { invalid, notFound } from '../errors.js';
import { findTemplate, TemplateError, templateVariables, type StackTemplate } from '../stacks/templates.js';
import type { Owner } from '../store/schema/index.js';
import type { Origin } from './context.js';
import { parseInput } from './parse.js';
import { createStack, type StackCtx, type StackResult } from './stacks.js';

export const templateDeploySchema = z
  .object({
    /** The stack's name (default: the template's). */
    name: z.string().optional(),
    /** The template's inputs by variable name (`DOMAIN`, `ADMIN_EMAIL`). */
    inputs: z.record(z.string().max(200), z.string().max(4096)).optional(),
  })
  .strict();

/** The variable list a template's stack is created with: inputs as typed, generated values and secret inputs sealed. */
export function templateStackVariables(t: StackTemplate, values: Record<string, string>) {
  const secret = new Set([...t.generated.map((g) => g.name), ...t.inputs.filter((i) => i.kind === 'secret').map((i) => i.name)]);
  const required = new Set(t.inputs.filter((i) => i.required).map((i) => i.name));
  return Object.entries(values)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => ({ key, value, is_secret: secret.has(key), required: required.has(key) }));
}

/** Creates stack `name` (default the template's name) from template `template`; 404 for an unknown template, 400 naming a wrong input. */
export function createStackFromTemplate(ctx: StackCtx, template: string, raw: unknown, origin: Origin, opts: { dryRun?: boolean; owner?: Owner; changedBy?: string | null } = {}): StackResult {
  const t = findTemplate(template);
  if (!t) throw notFound('template');
  const input = parseInput(templateDeploySchema, raw ?? {});
  // Blank fields of a form are "not given": the input's default applies.
  const given = Object.fromEntries(Object.entries(input.inputs ?? {}).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));
  let values: Record<string, string>;
  try {
    values = templateVariables(t, given);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    const key = err.message.split(' ')[0];
    throw invalid(err.message, { issues: [{ path: `inputs.${key}`, message: err.message }] });
  }
  return createStack(ctx, { name: input.name ?? t.name, compose: t.compose, variables: templateStackVariables(t, values) }, origin, opts);
}
