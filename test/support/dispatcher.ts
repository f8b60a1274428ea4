// The notification dispatcher (src/notify/dispatcher.ts) the way the daemon runs it: the key
// `notify:outbox` of a real work queue (here one of its own, on the real clock), stopped queue first.
import { createWorkQueue } from '../../src/controller/workqueue.js';
import { parseKey } from '../../src/controller/types.js';
import { createDispatcher, OUTBOX_KEY, type DispatcherDeps } from '../../src/notify/dispatcher.js';

export interface RunningDispatcher {
  /** The queue's stop, then the dispatcher's (cuts the sends in flight). */
  stop(): Promise<void>;
}

/** Starts sending the outbox now, as the daemon's start does (every name of the reconciler enqueued). */
export function runDispatcher(deps: Omit<DispatcherDeps, 'enqueue'>): RunningDispatcher {
  const queue = createWorkQueue({ handler: (key, signal) => dispatcher.reconcile(parseKey(key).name, { signal }) });
  const dispatcher = createDispatcher({ ...deps, enqueue: (key, opts) => queue.add(key, opts) });
  queue.add(OUTBOX_KEY);
  return {
    async stop() {
      await queue.stop();
      await dispatcher.stop();
    },
  };
}
