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

/** `SVC_PREVIEW_PORTS`, `20000-20999` (or one port): the inclusive range, or undefined when unset or malformed. */
export function parsePortRange(text: string | undefined): { from: number; to: number } | undefined {
  const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(text ?? '');
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  return from >= 1 && to <= 65535 && from <= to ? { from, to } : undefined;
}

/** The lowest port of the range no app holds and not reserved for svc itself; null when the range is full. */
export function pickPort(range: { from: number; to: number }, taken: Set<number>): number | null {
  for (let p = range.from; p <= range.to; p++) if (!taken.has(p)) return p;
  return null;
}
