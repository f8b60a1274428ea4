// Refusals said the way the form says its fields: "Port must be between 1 and 65535", not `fallback_port:
// Too small: expected number to be >=1`. The commands' issues carry the field path and zod's facts
// (src/desired/parse.ts); this maps the path to the form's label and the facts to words. Refusals that are
// not field issues (409 "an app named web already exists") pass through unchanged.
import { DomainError, type Issue } from '../errors.js';

/** Labels of the fields of every form, by the path the commands name them with. */
export const FIELD_LABELS: Record<string, string> = {
  name: 'Name', image_ref: 'Image', internal_port: 'Internal port', access_mode: 'Access mode', domain: 'Domain',
  fallback_port: 'Port', build_mode: 'Build mode', project_type: 'Project type', repo_url: 'Repository',
  branch: 'Branch', health_check_path: 'Health check path', app_type: 'App type', source: 'Source',
  replicas: 'Replicas', 'resources.memory_mb': 'Memory (MiB)', 'resources.cpus': 'CPUs', ci_workflow: 'CI workflow',
  key: 'Key', value: 'Value', alias: 'Alias', service_id: 'Service', type: 'Type',
};

/** Both bounds of the numeric fields, so a refusal gives the whole range whichever end was crossed. */
const RANGES: Record<string, [number, number]> = {
  internal_port: [1, 65535], fallback_port: [1, 65535], replicas: [0, 50],
  'resources.memory_mb': [6, 1_048_576], 'resources.cpus': [0.01, 1024], timeout_seconds: [1, 86_400],
};

const WHOLE = new Set(['internal_port', 'fallback_port', 'replicas', 'resources.memory_mb', 'service_id', 'timeout_seconds']);

/** One issue as a sentence under its label. */
export function describeIssue(issue: Issue, labels: Record<string, string> = FIELD_LABELS): string {
  const label = labels[issue.path];
  if (!label) return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
  const range = RANGES[issue.path];
  const number = WHOLE.has(issue.path) ? 'a whole number' : 'a number';
  if (issue.code === 'invalid_type' && issue.expected === 'number') return range ? `${label} must be ${number} between ${range[0]} and ${range[1]}` : `${label} must be ${number}`;
  if (issue.code === 'invalid_type') return `${label} is required`;
  if ((issue.code === 'too_small' || issue.code === 'too_big') && range) return `${label} must be between ${range[0]} and ${range[1]}`;
  if (issue.code === 'too_small' && issue.minimum !== undefined) return `${label} must be at least ${issue.minimum}`;
  if (issue.code === 'too_big' && issue.maximum !== undefined) return `${label} must be at most ${issue.maximum}`;
  if (issue.code === 'invalid_value') return `${label}: ${issue.message.replace(/^Invalid option: expected one of /, 'choose one of ')}`;
  // Our own rules are already words: "must start with ..." reads on from the label, "required when ..."
  // after an "is"; any other sentence follows the label after a colon.
  if (/^(must|is|larger) /.test(issue.message)) return `${label} ${issue.message}`;
  if (/^required\b/.test(issue.message)) return `${label} is ${issue.message}`;
  return `${label}: ${issue.message}`;
}

/** The sentence a form shows for a refusal: its field issues in words, else the command's sentence. */
export function formError(err: DomainError, labels?: Record<string, string>): string {
  const issues = (err.details as { issues?: Issue[] } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return err.message;
  return [...new Set(issues.map((i) => describeIssue(i, labels)))].join('; ');
}
