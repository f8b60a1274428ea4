// Which keys a container event dirties. Pure: the manager feeds engine events through it.
import { LABELS, type RuntimeEvent } from '../runtime/runtime.js';
import type { Key } from './types.js';

/** Container actions that can change what a reconciler observes; exec_*, attach, ... are noise. */
export const WATCHED_ACTIONS: ReadonlySet<string> = new Set([
  'start',
  'die',
  'oom',
  'destroy',
  'stop',
  'kill',
  'health_status',
]);

/**
 * The keys owning the container of `ev`, or none when the container belongs to another daemon (its
 * `svc.instance` differs) or the action is not one we react to. `health_status: healthy` counts as
 * `health_status`.
 */
export function keysForEvent(ev: RuntimeEvent, instance: string): Key[] {
  const action = ev.action.split(':')[0]!.trim();
  if (!WATCHED_ACTIONS.has(action)) return [];
  const labels = ev.labels ?? {};
  if (labels[LABELS.instance] !== instance) return [];
  const keys: Key[] = [];
  if (labels[LABELS.app]) keys.push(`app:${labels[LABELS.app]}`);
  if (labels[LABELS.service]) keys.push(`service:${labels[LABELS.service]}`);
  if (labels[LABELS.role] === 'proxy') keys.push('proxy:main');
  if (labels[LABELS.role] === 'job' && labels[LABELS.jobApp]) keys.push(`jobs:${labels[LABELS.jobApp]}`);
  return keys;
}
