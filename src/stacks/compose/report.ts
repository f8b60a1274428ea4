// What one load found: the problems that refuse the file (each naming the service and the key) and the
// warnings about what svc leaves out or changes. Both are sorted at the end so a load is deterministic.
import type { ComposeProblem } from '../model.js';

export class Report {
  readonly problems: ComposeProblem[] = [];
  private readonly notes = new Set<string>();

  refuse(service: string | undefined, key: string, message: string): void {
    this.problems.push(service === undefined ? { key, message } : { service, key, message });
  }

  warn(service: string | undefined, key: string, message: string): void {
    this.notes.add(`${service === undefined ? '' : `service ${service}: `}${key}: ${message}`);
  }

  get warnings(): string[] {
    return [...this.notes].sort();
  }
}

/** A Compose `list_or_dict` (environment, labels, build args, ...) as a map; a bare `KEY` entry is null. */
export function listOrDict(value: unknown): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  if (Array.isArray(value)) {
    for (const item of value) {
      const s = String(item);
      const eq = s.indexOf('=');
      if (eq < 0) out[s] = null;
      else out[s.slice(0, eq)] = s.slice(eq + 1);
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out[k] = v === null || v === undefined ? null : String(v);
  }
  return out;
}

/** A map with its keys in order, so two loads compare equal as JSON. */
export function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
