// The pure half shared by the Swarm infrastructure plans (agents:main, edges:main): svc keeps one service per
// key (a node, or a node and a part); what it finds is sorted by key, a service without a key or a second one
// for the same key goes, a kept one is out of date when its spec hash differs or someone scaled it, and the
// ones no wanted key names go. Each plan decides which keys it wants.
import type { PlanService } from '../runtime/swarm-agent-spec.js';

/** The services found, one per key, and the extras to remove (no key, or a second for the same key). */
export function servicesByKey<S extends PlanService>(services: S[], keyOf: (s: S) => string | undefined): { byKey: Map<string, S>; extras: S[] } {
  const byKey = new Map<string, S>();
  const extras: S[] = [];
  for (const s of services) {
    const key = keyOf(s);
    if (key === undefined || byKey.has(key)) extras.push(s);
    else byKey.set(key, s);
  }
  return { byKey, extras };
}

/** A kept service needs an update: its spec hash (in `label`) is not `hash`, or it was scaled by hand. */
export const outOfDate = (s: PlanService, label: string, hash: string): boolean => s.labels[label] !== hash || (s.replicas ?? 1) !== 1;

/** The found services whose key is not wanted any more. */
export const unwanted = <S>(byKey: Map<string, S>, wanted: Set<string>): S[] => [...byKey].filter(([key]) => !wanted.has(key)).map(([, s]) => s);
