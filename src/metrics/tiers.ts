// How long metrics are kept and at which resolution (issue 22): 10 s for an hour, 1 min for a day, 15 min
// for a week; and which tier answers which range. Pure.
import type { Tier } from '../store/metrics.js';

export const ROUND_SECONDS = 10;

export const TIERS: readonly Tier[] = [
  { seconds: 10, keepSeconds: 3600 },
  { seconds: 60, keepSeconds: 24 * 3600 },
  { seconds: 900, keepSeconds: 7 * 24 * 3600 },
];

export const RANGES = { '1h': TIERS[0], '24h': TIERS[1], '7d': TIERS[2] } as const;
export type Range = keyof typeof RANGES;

export const isRange = (v: unknown): v is Range => typeof v === 'string' && Object.hasOwn(RANGES, v);

/** The tier and the first bucket a range reads at `nowSeconds`. */
export function rangeWindow(range: Range, nowSeconds: number): { tier: number; since: number } {
  const t = RANGES[range];
  return { tier: t.seconds, since: nowSeconds - t.keepSeconds };
}
