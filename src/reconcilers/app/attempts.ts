// A bound on deploy steps that never finish because the daemon dies running them. A step that fails by
// throwing is handled where it runs (pipeline.ts ends the deploy `failed`, or backs off while the engine
// is down); but a step that ends the whole process (a crash the process guard must not survive) would be
// resumed by every new daemon and take it down again, for ever. So each process records, before it first
// runs a step of a deploy, that it began it; the count lives in the deploy row (it must outlive the
// process it counts), and once a step was begun MAX_STEP_STARTS times the deploy ends `failed` instead.
import type { Db } from '../../store/db.js';
import { updateDeploy } from '../../store/deploys.js';
import type { DeployRow } from '../../store/schema/index.js';

/** Daemon processes that may begin one step of one deploy; the next one gives up. */
export const MAX_STEP_STARTS = 3;

/** Steps this process has already begun (so a requeued wait costs no write). */
export interface AttemptMemory {
  begun: Set<string>;
}
export const newAttemptMemory = (): AttemptMemory => ({ begun: new Set() });

/**
 * Call before running `step` of `deploy`. The first time in this process it counts one more start in the
 * row; returns the reason to end the deploy when the step was already begun MAX_STEP_STARTS times without
 * finishing, otherwise undefined.
 */
export function beginStep(db: Db, memory: AttemptMemory, deploy: Pick<DeployRow, 'id' | 'attemptStep' | 'stepAttempts'>, step: string): string | undefined {
  const key = `${deploy.id}:${step}`;
  if (memory.begun.has(key)) return undefined;
  const starts = deploy.attemptStep === step ? deploy.stepAttempts : 0;
  if (starts >= MAX_STEP_STARTS) {
    return `step ${step} was begun ${starts} times and the daemon stopped every time before it finished; the deploy ends here so it cannot stop the daemon again`;
  }
  updateDeploy(db, undefined, deploy.id, { attemptStep: step, stepAttempts: starts + 1 });
  if (memory.begun.size >= 10_000) memory.begun.clear(); // bounded; forgetting only costs one more write
  memory.begun.add(key);
  return undefined;
}
