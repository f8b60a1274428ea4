/** @jsxImportSource hono/jsx */
// The job editor's form (issue 22): one scheduled job's fields, the next times its schedule fires (croner,
// src/jobs/preview.ts), the translation of the form into the API's job object, and a refusal of the apps
// command turned into sentences under the fields it concerns. The job list itself is written by the same
// command as `PUT /api/apps/{id} {jobs}` (job-pages.tsx), so the rules are the API's.
import type { FC } from 'hono/jsx';
import { CONCURRENCY, type Job } from '../desired/workload-fields.js';
import type { DomainError, Issue } from '../errors.js';
import type { SchedulePreview } from '../jobs/preview.js';
import { describeIssue } from './field-errors.js';
import { defined, int, text, type Form } from './context.js';
import { Field, Select } from './layout.js';

export const JOB_FIELDS = ['name', 'schedule', 'command', 'timeout_seconds', 'concurrency'] as const;
export type JobField = (typeof JOB_FIELDS)[number];
/** What the form shows: a stored job, or what was typed before a refusal or a preview. */
export type JobFormValues = Partial<Record<JobField, string>>;
export type JobFieldErrors = Partial<Record<JobField, string>>;

export const JOB_LABELS: Record<JobField, string> = {
  name: 'Job name',
  schedule: 'Schedule',
  command: 'Command',
  timeout_seconds: 'Timeout (seconds)',
  concurrency: 'If the previous run is still going',
};

const CONCURRENCY_MEANING: Record<(typeof CONCURRENCY)[number], string> = {
  forbid: 'forbid: skip this time (recorded as skipped)',
  allow: 'allow: run both side by side',
  replace: 'replace: stop the previous run, start this one',
};

/** A command as the form shows it: a string as written, an argument array as JSON. */
export const commandText = (c: Job['command']): string => (typeof c === 'string' ? c : JSON.stringify(c));

/**
 * The command typed: a JSON array of strings is an argument array (run without a shell), anything else a
 * string run by the image's `sh -c` (a shell line that starts with `[`, like `[ -f x ] && ...`, is not
 * valid JSON and stays a string).
 */
export function commandOfText(raw: string): string | string[] {
  const t = raw.trim();
  if (t.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(t);
      if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed;
    } catch {
      // not JSON: a shell line
    }
  }
  return t;
}

export const valuesOfJob = (j: Job): JobFormValues => ({
  name: j.name, schedule: j.schedule, command: commandText(j.command), timeout_seconds: String(j.timeout_seconds), concurrency: j.concurrency,
});

export const valuesOfJobForm = (f: Form): JobFormValues => Object.fromEntries(JOB_FIELDS.map((k) => [k, f[k] ?? ''])) as JobFormValues;

/** The API's job object from the form (a blank timeout or concurrency takes the API's default). */
export const jobOfForm = (f: Form): Record<string, unknown> =>
  defined({
    name: f.name?.trim() ?? '',
    schedule: f.schedule?.trim() ?? '',
    command: commandOfText(f.command ?? ''),
    timeout_seconds: int(f, 'timeout_seconds'),
    concurrency: text(f, 'concurrency'),
  });

/**
 * A refusal of the jobs list as sentences under the edited job's fields. The edited job is always the last
 * of the list sent (`index`), so a duplicate name is reported at its index too. Issues elsewhere (none,
 * the other jobs are stored valid) stay in `other`.
 */
export function jobFieldErrors(err: DomainError, index: number): { fields: JobFieldErrors; other: string[] } {
  const issues = (err.details as { issues?: Issue[] } | undefined)?.issues ?? [];
  const fields: JobFieldErrors = {};
  const other: string[] = [];
  const prefix = `jobs.${index}`;
  for (const issue of issues) {
    if (issue.path === prefix && /^duplicate job /.test(issue.message)) {
      fields.name ??= `${JOB_LABELS.name}: another job of this app is named ${issue.message.slice('duplicate job '.length)}`;
      continue;
    }
    const field = issue.path.startsWith(`${prefix}.`) ? (issue.path.slice(prefix.length + 1).split('.')[0] as JobField) : undefined;
    if (field && JOB_FIELDS.includes(field)) {
      // zod's own sentence first, ours after: ours are words ("must not be blank"), so they win.
      const said = describeIssue({ ...issue, path: field }, JOB_LABELS);
      if (!fields[field] || issue.code === 'custom') fields[field] = said;
    } else other.push(issue.path ? `${issue.path}: ${issue.message}` : issue.message);
  }
  if (issues.length === 0) other.push(err.message);
  return { fields, other };
}

/**
 * The next times, or why there are none; always the element `#next-runs`, which the page's script replaces
 * with `GET /apps/{id}/next-runs?schedule=` while the schedule is typed.
 */
export const NextRuns: FC<{ preview?: SchedulePreview }> = ({ preview }) => (
  <div id="next-runs" aria-live="polite">
    {preview && !preview.ok && <p class="muted">No next runs: the schedule {preview.problem}.</p>}
    {preview?.ok && (
      <>
        <p class="hint">Next runs (UTC):</p>
        <ol class="next-runs">
          {preview.runs.map((r) => (
            <li>
              <time datetime={r.at}>{r.text}</time>
            </li>
          ))}
        </ol>
      </>
    )}
  </div>
);

export const JobFields: FC<{ v: JobFormValues; errors: JobFieldErrors; preview?: SchedulePreview; previewUrl: string }> = ({ v, errors, preview, previewUrl }) => {
  const cmdId = 'f-command-job';
  const describedBy = [`${cmdId}-hint`, errors.command && `${cmdId}-error`].filter(Boolean).join(' ');
  return (
    <>
      <Field label={JOB_LABELS.name} name="name" value={v.name} required hint="lowercase letters, digits and -" autocomplete="off" error={errors.name} />
      <Field label={JOB_LABELS.schedule} name="schedule" value={v.schedule} required hint="cron in UTC: minute hour day month weekday (0 3 * * *), or @hourly, @daily, @weekly, @monthly" placeholder="0 3 * * *" autocomplete="off" error={errors.schedule} data-next-runs={previewUrl} />
      <NextRuns preview={preview} />
      <div class="field">
        <label for={cmdId}>{JOB_LABELS.command}</label>
        <span class="hint" id={`${cmdId}-hint`}>
          run in the app's live image by its sh -c; or a JSON array of arguments, run without a shell: ["rake", "db:migrate"]
        </span>
        <textarea id={cmdId} name="command" rows={3} required aria-describedby={describedBy} aria-invalid={errors.command ? 'true' : undefined}>
          {v.command ?? ''}
        </textarea>
        {errors.command && (
          <span class="field-error" id={`${cmdId}-error`}>
            {errors.command}
          </span>
        )}
      </div>
      <div class="row">
        <Field label={JOB_LABELS.timeout_seconds} name="timeout_seconds" value={v.timeout_seconds || '3600'} hint="1 to 86400; stopped when it runs longer" inputmode="numeric" error={errors.timeout_seconds} />
        <Select label={JOB_LABELS.concurrency} name="concurrency" value={v.concurrency || 'forbid'} options={CONCURRENCY.map((c) => [c, CONCURRENCY_MEANING[c]] as const)} error={errors.concurrency} />
      </div>
    </>
  );
};
