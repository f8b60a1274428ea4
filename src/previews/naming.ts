// Where a preview lives: its app name, its domain, its port. Pure string and number rules (API.md "Previews").

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
