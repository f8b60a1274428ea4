// Field rules of issue 22: persistent volumes, scheduled jobs and the commands they run. The app stores
// volumes and jobs as canonical JSON text (sorted by name), so the manifest diff compares them as values.
import { Cron } from 'croner';
import { z } from 'zod';
import { nameSchema } from './fields.js';

/** At most this many volumes and jobs per app: enough for any real app, small enough to list on a page. */
export const MAX_VOLUMES = 16;
export const MAX_JOBS = 32;
/** A job's or a one-off command's longest run: one day. */
export const MAX_TIMEOUT_SECONDS = 86_400;
export const DEFAULT_JOB_TIMEOUT_SECONDS = 3_600;

const CONTROL = /[\x00-\x1f\x7f]/;
/**
 * Where a volume appears in the container: absolute, normalised (no `.`/`..` segment, no `//`, no
 * trailing `/`), not `/` itself, no control characters, no `:` or `,` (the engine's mount syntax).
 */
export const mountPathSchema = z
  .string()
  .max(1024)
  .superRefine((p, ctx) => {
    const problem = mountPathProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export function mountPathProblem(p: string): string | undefined {
  if (!p.startsWith('/')) return 'must be an absolute path (start with /)';
  if (p === '/') return 'must not be / (the container root)';
  if (CONTROL.test(p) || /[:,]/.test(p)) return 'must not contain control characters, : or ,';
  if (p.endsWith('/')) return 'must not end with /';
  if (p.split('/').slice(1).some((s) => s === '' || s === '.' || s === '..')) return 'must not contain empty, . or .. segments';
  return undefined;
}

export const volumeSchema = z.object({ name: nameSchema, mount_path: mountPathSchema }).strict();
export type Volume = z.infer<typeof volumeSchema>;

/** A list whose items are unique by `key` (and by `key2` when given), issues at the duplicate's index. */
const uniqueBy = <T>(what: string, ...keys: ((t: T) => string)[]) => (list: T[], ctx: z.RefinementCtx) => {
  for (const key of keys) {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate ${what} ${k}` });
      seen.add(k);
    });
  }
};

export const volumesSchema = z
  .array(volumeSchema)
  .max(MAX_VOLUMES)
  .superRefine(uniqueBy<Volume>('volume', (v) => v.name))
  .superRefine(uniqueBy<Volume>('mount path', (v) => v.mount_path))
  .superRefine((list, ctx) => {
    // One mounted inside another would hide part of it depending on the engine's mount order.
    list.forEach((v, i) => {
      const outer = list.find((o) => o !== v && v.mount_path.startsWith(`${o.mount_path}/`));
      if (outer) ctx.addIssue({ code: 'custom', path: [i, 'mount_path'], message: `is inside ${outer.mount_path} (volume ${outer.name})` });
    });
  });

/**
 * A command: an argument array run as is (the image's ENTRYPOINT is replaced, argv[0] is looked up in the
 * image's PATH), or a string run by the image's `sh -c`. Never a host shell: both only reach the engine.
 */
export const commandSchema = z.union([
  z.string().min(1).max(16_384).refine((s) => !s.includes('\0'), 'must not contain NUL').refine((s) => s.trim() !== '', 'must not be blank'),
  z
    .array(z.string().max(16_384).refine((s) => !s.includes('\0'), 'must not contain NUL'))
    .min(1)
    .max(1024)
    .refine((a) => a[0] !== '', 'the program (first element) must not be empty'),
]);
export type Command = z.infer<typeof commandSchema>;

/** The argument array that runs. */
export const argvOf = (c: Command): string[] => (typeof c === 'string' ? ['sh', '-c', c] : c);

/**
 * A cron schedule in UTC: five fields (minute hour day month weekday) or a nickname (`@hourly`, `@daily`,
 * `@weekly`, `@monthly`, `@yearly`). Parsed by croner; seconds fields are refused (minute granularity).
 */
export const scheduleSchema = z
  .string()
  .max(256)
  .superRefine((s, ctx) => {
    const problem = scheduleProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export function scheduleProblem(s: string): string | undefined {
  const t = s.trim();
  if (!/^@(hourly|daily|weekly|monthly|yearly|annually|midnight)$/i.test(t) && t.split(/\s+/).length !== 5) {
    return 'must be a cron expression of five fields (minute hour day month weekday, UTC) or @hourly/@daily/@weekly/@monthly/@yearly';
  }
  try {
    if (!cronOf(t).nextRun(new Date())) return 'never runs';
  } catch (err) {
    return `is not a valid cron expression: ${err instanceof Error ? err.message : String(err)}`;
  }
  return undefined;
}

/** croner's parser for a schedule, in UTC, never started (svc schedules by itself, with its own clock). */
export const cronOf = (schedule: string) => new Cron(schedule.trim(), { timezone: 'UTC', paused: true });

export const CONCURRENCY = ['forbid', 'allow', 'replace'] as const;
export type Concurrency = (typeof CONCURRENCY)[number];

export const jobSchema = z
  .object({
    name: nameSchema,
    schedule: scheduleSchema,
    command: commandSchema,
    timeout_seconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).default(DEFAULT_JOB_TIMEOUT_SECONDS),
    concurrency: z.enum(CONCURRENCY).default('forbid'),
  })
  .strict();
export type Job = z.output<typeof jobSchema>;

export const jobsSchema = z.array(jobSchema).max(MAX_JOBS).superRefine(uniqueBy<Job>('job', (j) => j.name));

/** Canonical JSON text of a list (sorted by name, keys in a fixed order): equal lists, equal text. */
export function canonicalVolumes(list: Volume[]): string {
  return JSON.stringify([...list].sort((a, b) => a.name.localeCompare(b.name)).map((v) => ({ name: v.name, mount_path: v.mount_path })));
}
export function canonicalJobs(list: Job[]): string {
  return JSON.stringify(
    [...list]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((j) => ({ name: j.name, schedule: j.schedule.trim(), command: j.command, timeout_seconds: j.timeout_seconds, concurrency: j.concurrency })),
  );
}

/** The stored text read back (written only through the schemas above). */
export const parseVolumes = (text: string): Volume[] => JSON.parse(text) as Volume[];
export const parseJobs = (text: string): Job[] => JSON.parse(text) as Job[];
