// An app's preview settings (issue 20): the API shape, the defaults, and the canonical JSON the apps row
// keeps (sorted keys, every member present), so two equal settings are equal strings and a manifest that
// re-states them plans "unchanged".
import { z } from 'zod';

// The env rules of src/desired/fields.ts (a variable's key, 64 KiB values), restated: src/desired imports
// this folder, so this folder may not import it back. test/unit/previews checks the two agree.
const envKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'must match ^[A-Za-z_][A-Za-z0-9_]{0,255}$');
const envValue = z.string().refine((v) => Buffer.byteLength(v, 'utf8') <= 64 * 1024, 'larger than 65536 bytes (64 KiB)');

export const PREVIEW_SERVICES = ['none', 'fresh', 'copy'] as const;

export const previewSettingsSchema = z
  .object({
    enabled: z.boolean().default(false),
    max: z.number().int().min(1).max(50).default(5),
    ttl_days: z.number().int().min(1).max(365).default(7),
    env: z.record(envKey, envValue).default({}),
    /**
     * `fresh`: the preview gets its own empty instance of each service the parent links; `copy`: the same,
     * loaded with a copy of the parent's service's data when it starts (src/desired/preview-services.ts).
     */
    services: z.enum(PREVIEW_SERVICES).default('none'),
    /** Limits of each preview (it must never starve production); the parent's own limit wins when lower. */
    resources: z
      .object({ memory_mb: z.number().int().min(6).max(1_048_576).default(256), cpus: z.number().min(0.01).max(1024).default(0.5) })
      .strict()
      .default({ memory_mb: 256, cpus: 0.5 }),
    /** Pull requests whose head is in a fork get a preview too (never with the parent's secrets). */
    forks: z.boolean().default(false),
  })
  .strict();

export type PreviewSettings = z.output<typeof previewSettingsSchema>;

export const DEFAULT_PREVIEW_SETTINGS: PreviewSettings = previewSettingsSchema.parse({});

/** The stored form: canonical JSON, or null for "not set" (previews off). */
export function settingsToStore(s: PreviewSettings | null): string | null {
  if (s === null) return null;
  const env = Object.fromEntries(Object.entries(s.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const resources = { cpus: s.resources.cpus, memory_mb: s.resources.memory_mb };
  return JSON.stringify({ enabled: s.enabled, env, forks: s.forks, max: s.max, resources, services: s.services, ttl_days: s.ttl_days });
}

/** The settings a stored value means (null or unreadable: the defaults, previews off). */
export function settingsOf(stored: string | null): PreviewSettings {
  if (!stored) return DEFAULT_PREVIEW_SETTINGS;
  const parsed = previewSettingsSchema.safeParse(JSON.parse(stored));
  return parsed.success ? parsed.data : DEFAULT_PREVIEW_SETTINGS;
}
