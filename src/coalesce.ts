// One run at a time of some work that many callers may ask for (the node watch's look at the nodes): a call during a run asks for exactly one more run after it, and every caller gets the promise
// that ends once the runs it asked for are done. Never two at once, never a run per call.

export interface Coalesced {
  /** Asks for a run; resolves when it (or the run it joined) is done. */
  run(): Promise<void>;
  /** The run under way, if any (to wait for it when stopping). */
  current(): Promise<void> | undefined;
}

/** `work` run one at a time, calls coalesced; no run starts once `stopped()` says so. */
export function coalesced(work: () => Promise<void>, stopped: () => boolean = () => false): Coalesced {
  let running: Promise<void> | undefined;
  let again = false;
  return {
    run() {
      if (stopped()) return Promise.resolve();
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          await work();
        } while (again && !stopped());
      })().finally(() => (running = undefined));
      return running;
    },
    current: () => running,
  };
}
