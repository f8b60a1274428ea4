// One-click stacks (issue 32 section 3): `templates/<name>/compose.yml` plus `template.yml` (what svc asks the
// user, what it generates), shipped in the repository. Each is read once, and refused at read time unless its
// Compose file loads with sample inputs and generated values, with no warning, every image pinned to a
// version, every service health-checked and no anonymous volume: what the catalog promises.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { loadCompose } from './compose/load.js';
import type { ComposeStack } from './model.js';

/** The repository's templates/ (the same from src/stacks and from dist/stacks). */
export const TEMPLATES_DIR = join(import.meta.dirname, '../../templates');

export const TEMPLATE_NAME = /^[a-z][a-z0-9-]{0,62}$/;
const VARIABLE = z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'must be an upper-case variable name');

const inputSchema = z
  .object({
    name: VARIABLE,
    title: z.string().min(1),
    description: z.string().optional(),
    /** domain: a host name; email; url: an https URL; text; secret: typed by the user, stored as a secret variable. */
    kind: z.enum(['domain', 'email', 'url', 'text', 'secret']),
    default: z.string().optional(),
    required: z.boolean().default(true),
  })
  .strict();

const generatedSchema = z
  .object({
    name: VARIABLE,
    description: z.string().optional(),
    alphabet: z.enum(['alnum', 'hex', 'base64']),
    /** Characters of the value. */
    length: z.number().int().min(16).max(256).optional(),
    /** Or random bytes, encoded in hex or base64 (for keys an application decodes to a fixed size). */
    bytes: z.number().int().min(16).max(128).optional(),
  })
  .strict()
  .refine((g) => (g.length === undefined) !== (g.bytes === undefined), 'give length or bytes, not both')
  .refine((g) => g.bytes === undefined || g.alphabet !== 'alnum', 'bytes are encoded in hex or base64');

const templateFileSchema = z
  .object({
    title: z.string().min(1),
    description: z.string().min(1),
    website: z.string().url().optional(),
    category: z.string().min(1),
    inputs: z.array(inputSchema).default([]),
    generated: z.array(generatedSchema).default([]),
  })
  .strict();

export type TemplateInput = z.infer<typeof inputSchema>;
export type TemplateGenerated = z.infer<typeof generatedSchema>;

export interface StackTemplate {
  name: string;
  title: string;
  description: string;
  website?: string;
  category: string;
  inputs: TemplateInput[];
  generated: TemplateGenerated[];
  /** The Compose file's text, as shipped. */
  compose: string;
  /** The Compose services' names, in depends_on order. */
  services: string[];
}

export class TemplateError extends Error {}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A value for one generated variable; `random` is the source of bytes (crypto's, unless a test gives one). */
export function generateValue(g: TemplateGenerated, random: (n: number) => Buffer = randomBytes): string {
  if (g.bytes !== undefined) return random(g.bytes).toString(g.alphabet === 'hex' ? 'hex' : 'base64');
  const length = g.length!;
  if (g.alphabet === 'hex') return random(Math.ceil(length / 2)).toString('hex').slice(0, length);
  if (g.alphabet === 'base64') return random(Math.ceil((length * 3) / 4)).toString('base64').slice(0, length);
  // Rejection sampling: 62 symbols from bytes without a bias towards the first ones.
  let out = '';
  while (out.length < length) {
    for (const b of random(length * 2)) if (b < 248 && out.length < length) out += ALNUM[b % 62];
  }
  return out;
}

const INPUT_RULES: Record<TemplateInput['kind'], RegExp> = {
  domain: /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  url: /^https?:\/\/[^\s]+$/,
  text: /^[^\n\r\0]*$/,
  secret: /^[^\0]*$/,
};

/**
 * The stack variables of a template: the user's inputs (defaults filled in, each checked by its kind) and a
 * fresh value for each generated one. Throws TemplateError naming the input that is missing or wrong.
 */
export function templateVariables(t: Pick<StackTemplate, 'inputs' | 'generated'>, given: Record<string, string>, random: (n: number) => Buffer = randomBytes): Record<string, string> {
  const known = new Set([...t.inputs.map((i) => i.name), ...t.generated.map((g) => g.name)]);
  const unknown = Object.keys(given).filter((k) => !known.has(k));
  if (unknown.length > 0) throw new TemplateError(`${unknown[0]} is not an input of this template`);
  const out: Record<string, string> = {};
  for (const input of t.inputs) {
    const value = given[input.name] ?? input.default;
    if (value === undefined || value === '') {
      if (input.required) throw new TemplateError(`${input.name} (${input.title}) is required`);
      out[input.name] = '';
      continue;
    }
    const v = input.kind === 'domain' ? value.toLowerCase() : value;
    if (!INPUT_RULES[input.kind].test(v)) throw new TemplateError(`${input.name} must be ${input.kind === 'domain' ? 'a host name such as app.example.com' : `a valid ${input.kind}`}`);
    out[input.name] = v;
  }
  for (const g of t.generated) out[g.name] = given[g.name] ?? generateValue(g, random);
  return out;
}

/** What each input kind is filled with to check a template. */
const SAMPLE: Record<TemplateInput['kind'], string> = { domain: 'app.example.com', email: 'admin@example.com', url: 'https://id.example.com/oauth', text: 'sample', secret: 'sample-secret' };

const pinned = (image: string) => /@sha256:[0-9a-f]{64}$/.test(image) || (/:[\w][\w.-]*$/.test(image.replace(/^[^/]+:\d+\//, '')) && !/:(latest|stable|main|master|edge|nightly)$/.test(image));

/** The template's problems, from its Compose file loaded with sample inputs and generated values; [] when it is fit to ship. */
export function templateProblems(t: StackTemplate): string[] {
  const names = [...t.inputs.map((i) => i.name), ...t.generated.map((g) => g.name)];
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) return [`${dup} is declared twice`];
  const sample = Object.fromEntries(t.inputs.map((i) => [i.name, i.default ?? SAMPLE[i.kind]]));
  const load = loadCompose({ text: t.compose, variables: templateVariables(t, sample) });
  if (!load.ok) return load.problems.map((p) => `${p.service ? `service ${p.service}: ` : ''}${p.key}: ${p.message}`);
  const problems = load.warnings.map((w) => `warning: ${w}`);
  problems.push(...servicesProblems(load.stack));
  const used = new Set([...t.compose.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
  for (const n of names) if (!used.has(n)) problems.push(`${n} is declared but the Compose file never uses it`);
  return problems;
}

function servicesProblems(stack: ComposeStack): string[] {
  const out: string[] = [];
  for (const s of stack.services) {
    if (!s.image || !pinned(s.image)) out.push(`service ${s.name}: the image must be pinned to a version tag (${s.image ?? 'a build'})`);
    if (s.healthcheck?.kind !== 'command') out.push(`service ${s.name}: needs a healthcheck`);
    if (s.volumes.some((v) => v.kind === 'bind')) out.push(`service ${s.name}: a template ships no files to bind-mount`);
  }
  if (!stack.services.some((s) => s.route)) out.push('no service is routed (x-svc.domain)');
  return out;
}

function readOne(dir: string, name: string): StackTemplate {
  const folder = join(dir, name);
  const compose = readFileSync(join(folder, 'compose.yml'), 'utf8');
  const parsed = templateFileSchema.safeParse(parse(readFileSync(join(folder, 'template.yml'), 'utf8')));
  if (!parsed.success) throw new TemplateError(`templates/${name}/template.yml: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const load = loadCompose({ text: compose, variables: templateVariables(parsed.data, Object.fromEntries(parsed.data.inputs.map((i) => [i.name, i.default ?? SAMPLE[i.kind]]))) });
  const t: StackTemplate = { name, ...parsed.data, compose, services: load.ok ? load.stack.services.map((s) => s.name) : [] };
  const problems = templateProblems(t);
  if (problems.length > 0) throw new TemplateError(`templates/${name}: ${problems.join('; ')}`);
  return t;
}

const cache = new Map<string, StackTemplate[]>();

/** Every template of `dir`, by name; read and checked once per directory (they ship with svc). */
export function listTemplates(dir = TEMPLATES_DIR): StackTemplate[] {
  let list = cache.get(dir);
  if (!list) {
    const names = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && TEMPLATE_NAME.test(e.name)).map((e) => e.name).sort() : [];
    list = names.map((n) => readOne(dir, n));
    cache.set(dir, list);
  }
  return list;
}

/** One template by name, or undefined; the name is checked before it is near a path. */
export function findTemplate(name: string, dir = TEMPLATES_DIR): StackTemplate | undefined {
  return TEMPLATE_NAME.test(name) ? listTemplates(dir).find((t) => t.name === name) : undefined;
}
