// The instance identity: the `svc.instance` label on every container this daemon creates, and the prefix
// of their names. It belongs to the data directory (DESIGN.md rule 14): generated at the first start and
// kept in `settings`, so two data directories on one engine never take each other's containers for
// orphans, and a backup restored on a new host keeps it. `SVC_INSTANCE` overrides it explicitly.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { apps, nowIso, services, settings } from './schema/index.js';

export const INSTANCE_KEY = 'instance';
/** What `SVC_INSTANCE` accepts and what is generated: a container-name prefix. */
export const INSTANCE_RE = /^[a-z][a-z0-9-]{0,30}$/;
/** The identity of every svc before identities were per data directory; its names are the contract's. */
export const LEGACY_INSTANCE = 'svc';

export type InstanceSource = 'SVC_INSTANCE' | 'database' | 'legacy' | 'generated';

export interface InstanceDecision {
  instance: string;
  source: InstanceSource;
  /** Set when the decision must be written to the database (nothing was stored yet). */
  store?: string;
}

/**
 * Pure: which identity this start uses. An explicit override wins; else the stored one; else a database
 * that already holds apps or services (made before identities existed, its containers labelled `svc`)
 * keeps `svc`; else a new one. Whatever is chosen is stored when nothing was, so removing an override
 * later keeps the same identity.
 */
export function decideInstance(o: { override?: string; stored?: string; hasState: boolean; generate: () => string }): InstanceDecision {
  const store = (instance: string) => (o.stored ? undefined : instance);
  if (o.override) return { instance: o.override, source: 'SVC_INSTANCE', store: store(o.override) };
  if (o.stored) return { instance: o.stored, source: 'database' };
  if (o.hasState) return { instance: LEGACY_INSTANCE, source: 'legacy', store: LEGACY_INSTANCE };
  const made = o.generate();
  return { instance: made, source: 'generated', store: made };
}

/** `svc-` and six random characters of [a-z0-9]. */
export function generateInstance(bytes: (n: number) => Buffer = randomBytes): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return 'svc-' + [...bytes(6)].map((b) => alphabet[b % alphabet.length]).join('');
}

export const storedInstance = (db: Db): string | undefined => db.select().from(settings).where(eq(settings.key, INSTANCE_KEY)).get()?.value;

/** Writes the identity (an in-place restore puts the running one back over the archive's). */
export function storeInstance(db: Db, instance: string): void {
  db.insert(settings)
    .values({ key: INSTANCE_KEY, value: instance, updatedAt: nowIso() })
    .onConflictDoUpdate({ target: settings.key, set: { value: instance, updatedAt: nowIso() } })
    .run();
}

/** Decides this start's identity from the database and the override, storing it when new. */
export function resolveInstance(db: Db, override: string | undefined): InstanceDecision {
  const hasState = !!(db.select({ id: apps.id }).from(apps).limit(1).get() ?? db.select({ id: services.id }).from(services).limit(1).get());
  const decision = decideInstance({ override, stored: storedInstance(db), hasState, generate: generateInstance });
  if (decision.store) storeInstance(db, decision.store);
  return decision;
}
