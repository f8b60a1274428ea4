// Where a preview lives: its app name, its domain, its port. Pure string and number rules (API.md "Previews").
import { createHash } from 'node:crypto';

/** `<app>-pr-<number>`; null when it would break the app-name rule (63 characters). */
export function previewName(parent: string, pr: number): string | null {
  const name = `${parent}-pr-${pr}`;
  return name.length <= 63 ? name : null;
}

/** Domain mode: `pr-<number>.<parent domain>`; null when the result is not a valid host name. */
export function previewDomain(parentDomain: string, pr: number): string | null {
  const d = `pr-${pr}.${parentDomain}`;
  return d.length <= 253 ? d : null;
}

/** The lowest port of the range no app holds and not reserved for svc itself; null when the range is full. */
export function pickPort(range: { from: number; to: number }, taken: Set<number>): number | null {
  for (let p = range.from; p <= range.to; p++) if (!taken.has(p)) return p;
  return null;
}

/**
 * The name of a preview's fresh instance of service `service`: `<preview app>-<service>`, shortened with a
 * hash to the 63-character service-name rule, and numbered (`-2`, `-3`...) past a name `taken` says is in
 * use (a row, even one being deleted, or a data directory that still holds data).
 */
export function freshServiceName(previewApp: string, service: string, taken: (name: string) => boolean): string {
  const fit = (s: string, suffix = '') => {
    const whole = s + suffix;
    if (whole.length <= 63) return whole;
    const hash = createHash('sha256').update(s).digest('hex').slice(0, 8);
    return `${s.slice(0, 63 - suffix.length - 9).replace(/-+$/, '')}-${hash}${suffix}`;
  };
  const base = `${previewApp}-${service}`;
  for (let n = 1; ; n++) {
    const name = fit(base, n === 1 ? '' : `-${n}`);
    if (!taken(name)) return name;
  }
}
