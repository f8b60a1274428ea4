// The stack deploy's next step (issue 32), pure: walk the steps in depends_on order, each service once the
// services of this deploy it depends on are done (a dependency is deployed and healthy before what depends
// on it starts: its app deploy succeeds only after its health check; independent services deploy side by
// side), and after a failed step, once the others under way ended, walk back over the services already
// replaced, newest first, each rolled back to the deploy it replaced. A service the failed deploy created stays (it has no
// earlier definition to go back to).
import type { DeployStatus, StackDeployRow, StackDeployStep } from '../../store/schema/index.js';

/** How often a step in progress is looked at (its app deploy is the app reconciler's; this only follows it). */
export const STEP_POLL_MS = 150;

export type StackAction =
  | { kind: 'begin' }
  | { kind: 'start_step'; index: number }
  | { kind: 'wait'; afterMs: number }
  | { kind: 'step_done'; index: number }
  | { kind: 'step_failed'; index: number }
  | { kind: 'rollback_step'; index: number }
  | { kind: 'keep_step'; index: number }
  | { kind: 'rollback_done'; index: number; ok: boolean }
  | { kind: 'finish'; status: 'success' | 'rolled_back' };

const OPEN: ReadonlySet<DeployStatus> = new Set(['pending', 'running']);

export function planStack(d: Pick<StackDeployRow, 'status' | 'phase' | 'steps'>, deployStatus: (id: number) => DeployStatus | undefined): StackAction {
  if (d.status === 'pending') return { kind: 'begin' };
  const steps: StackDeployStep[] = d.steps;
  // A service deploy that ended is recorded first, in either phase: a rollback waits for the ones still under way.
  let underWay = false;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    if (s.status !== 'running') continue;
    const st = s.deployId === null ? undefined : deployStatus(s.deployId);
    if (st !== undefined && OPEN.has(st)) underWay = true;
    else return st === 'success' ? { kind: 'step_done', index: i } : { kind: 'step_failed', index: i };
  }
  if (d.phase === 'forward') {
    const done = new Set(steps.filter((s) => s.status === 'done').map((s) => s.service));
    const inDeploy = new Set(steps.map((s) => s.service));
    // A step starts once the services of this deploy it depends on are done (`after`); a step of an older
    // row without `after` waits for every step before it.
    const ready = (s: StackDeployStep, i: number) =>
      s.after === undefined ? steps.slice(0, i).every((p) => p.status === 'done') : s.after.every((a) => done.has(a) || !inDeploy.has(a));
    for (let i = 0; i < steps.length; i++) if (steps[i]!.status === 'pending' && ready(steps[i]!, i)) return { kind: 'start_step', index: i };
    if (underWay || steps.some((s) => s.status === 'pending')) return { kind: 'wait', afterMs: STEP_POLL_MS };
    return { kind: 'finish', status: 'success' };
  }
  if (underWay) return { kind: 'wait', afterMs: STEP_POLL_MS };
  for (let i = steps.length - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.status === 'rolling_back') {
      const st = s.deployId === null ? undefined : deployStatus(s.deployId);
      if (st !== undefined && OPEN.has(st)) return { kind: 'wait', afterMs: STEP_POLL_MS };
      return { kind: 'rollback_done', index: i, ok: st === 'success' };
    }
    if (s.status !== 'done') continue;
    return s.previousDeployId === null ? { kind: 'keep_step', index: i } : { kind: 'rollback_step', index: i };
  }
  return { kind: 'finish', status: 'rolled_back' };
}
