// Keeps a subscription to the engine's container events alive: reconnects with backoff when the engine
// restarts or is not there yet, logs one clear line per outage, and says when it (re)connected so the
// manager can enqueue everything (events sent while we were away are lost).
import type { Runtime, RuntimeEvent } from '../runtime/runtime.js';
import type { Logger } from '../log.js';
import type { Clock } from './clock.js';
import { backoffDelay } from './workqueue.js';

export interface EventWatchOptions {
  runtime: Pick<Runtime, 'events'>;
  clock: Clock;
  log: Logger;
  /** Where the engine is, for the outage line (DOCKER_HOST or the default socket). */
  engine: string;
  onEvent(ev: RuntimeEvent): void;
  /** Called on every successful subscription; `again` is false only for a first connect without outage. */
  onConnected(again: boolean): void;
  /** Reconnect delay: doubles from `minDelayMs` (default 500) up to `maxDelayMs` (default 30 s). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

export interface EventWatch {
  /** Aborts the subscription and resolves when the loop has ended. */
  stop(): Promise<void>;
}

/** Starts watching at once; never throws, retries until stopped. */
export function watchEvents(o: EventWatchOptions): EventWatch {
  const abort = new AbortController();
  const signal = abort.signal;
  let everConnected = false;
  let outage = false; // the unreachable line was logged and no connect since
  let attempts = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        o.clock.clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = o.clock.setTimeout(done, ms);
      signal.addEventListener('abort', done);
    });

  async function loop() {
    while (!signal.aborted) {
      let connected = false;
      const markConnected = () => {
        if (connected) return;
        connected = true;
        attempts = 0;
        const again = everConnected || outage;
        if (outage) o.log.info('docker engine reachable again', { engine: o.engine });
        everConnected = true;
        outage = false;
        o.onConnected(again);
      };
      try {
        for await (const ev of o.runtime.events(signal, { onConnected: markConnected })) {
          markConnected();
          try {
            o.onEvent(ev);
          } catch (err) {
            o.log.error('handling an engine event failed', { error: message(err) });
          }
        }
        if (signal.aborted) break;
        if (connected) o.log.warn('docker events stream ended; reconnecting', { engine: o.engine });
      } catch (err) {
        if (signal.aborted) break;
        if (!connected && !outage) {
          o.log.warn(`docker engine unreachable at ${o.engine}: ${message(err)}; retrying`);
          outage = true;
        } else if (connected) {
          o.log.warn('docker events stream failed; reconnecting', { engine: o.engine, error: message(err) });
        } else {
          o.log.debug('docker engine still unreachable', { engine: o.engine, error: message(err) });
        }
      }
      attempts++;
      await sleep(backoffDelay(attempts, o.minDelayMs ?? 500, o.maxDelayMs ?? 30_000));
    }
  }

  const done = loop();
  return {
    async stop() {
      abort.abort();
      await done;
    },
  };
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
