// Compose's units: durations as Go writes them (`1m30s`, `500ms`, `1.5h`; compose-spec 11 "Specifying
// durations"), byte sizes with b/k/m/g suffixes in powers of 1024 (`512m`, `1gb`; "Specifying byte values"),
// and CPU counts. Each returns undefined for a value that is not one, so the caller names the key.

const DURATION_UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration string; a bare number is seconds (what a YAML integer here means to people). */
export function durationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '0') return 0;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * DURATION_UNIT_MS[m[2]];
    at = part.lastIndex;
  }
  return text.length > 0 ? Math.round(total) : undefined;
}

const BYTE_UNIT: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4 };

/** Bytes of `512m`, `1.5g`, `2048k`, `300` (case-insensitive, as docker's units.RAMInBytes reads them). */
export function bytes(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m && BYTE_UNIT[m[2].toLowerCase()];
  return m && unit ? Math.round(Number(m[1]) * unit) : undefined;
}

/** A CPU count: `0.5`, `"1.5"`, `2`. */
export function cpus(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}
