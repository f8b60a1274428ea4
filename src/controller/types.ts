// The contracts of the reconcile machinery (DESIGN.md "Core contracts").

/** What a reconciler is asked to converge: one named object of one kind. */
export type Kind = 'app' | 'service' | 'proxy' | 'backup' | 'manifests' | 'restore' | 'import' | 'jobs' | 'offsite' | 'agents' | 'edges' | 'node' | 'previews' | 'certs' | 'nodes' | 'notify' | 'disk' | 'stack' | 'service-backup';
export type Key = `${Kind}:${string}`;

/** `{}` waits for the next event or resync; `requeueAfterMs` asks to be called again after that delay. */
export type Result = { requeueAfterMs?: number };

/** A failure that retrying will not fix (defined in errors.ts so adapters below the controller can throw it). */
export { TerminalError } from '../errors.js';

/**
 * What a pass is given besides the name. `signal` aborts when the daemon stops: long work (a clone, an
 * image build) ends at once and its step starts again at the next start, instead of holding the stop.
 */
export interface ReconcileCtx {
  signal: AbortSignal;
}

export interface Reconciler {
  kind: Kind;
  reconcile(name: string, ctx?: ReconcileCtx): Promise<Result>;
  /** Every name this reconciler owns, for the periodic resync. */
  listNames(): Promise<string[]> | string[];
}

/** Where desired-state writes announce what changed; the controller's work queue implements it. */
export interface Enqueue {
  (key: Key, opts?: { afterMs?: number }): void;
}

export const keyOf = (kind: Kind, name: string): Key => `${kind}:${name}`;
export function parseKey(key: Key): { kind: Kind; name: string } {
  const i = key.indexOf(':');
  return { kind: key.slice(0, i) as Kind, name: key.slice(i + 1) };
}
