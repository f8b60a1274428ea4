// The controller manager: one work queue in front of every registered reconciler. It is the `Enqueue`
// desired-state writers call, and it also feeds the queue from engine events (mapped to owning keys by
// labels), from a full enqueue at start and on every event-stream reconnect, and from a periodic resync,
// because events get lost (DESIGN.md rule 4).
import type { Runtime, RuntimeEvent } from '../runtime/runtime.js';
import { silentLogger, type Logger } from '../log.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { keysForEvent } from './event-keys.js';
import { watchEvents, type EventWatch } from './event-watch.js';
import { keyOf, parseKey, type Enqueue, type Key, type Kind, type Reconciler, type Result } from './types.js';
import { createWorkQueue } from './workqueue.js';
import { mark } from '../trace.js';

export interface ManagerOptions {
  runtime: Pick<Runtime, 'events'>;
  /** config.instance: only containers labelled with it are ours. */
  instance: string;
  log?: Logger;
  clock?: Clock;
  /** Full resync period (config.resyncMs; default 5 min). */
  resyncMs?: number;
  /** Reconciles running at once (default 4). */
  concurrency?: number;
  /** For log lines: DOCKER_HOST or the default socket. */
  engine?: string;
  /** Work-queue retry delays (default 5 ms .. 5 min). */
  retry?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Event-stream reconnect delays (default 500 ms .. 30 s). */
  eventsRetry?: { minDelayMs?: number; maxDelayMs?: number };
  /**
   * Called when the machines may have changed: a Swarm node went down or came back, or the event stream
   * (re)connected (what happened meanwhile was not seen). src/cluster/node-watch.ts records node events.
   */
  onNodesChanged?: () => void;
  /** Sees every engine event before its keys are enqueued (the app reconciler's kill notes). */
  onEvent?: (ev: RuntimeEvent) => void;
}

export interface Manager {
  /** Adds a reconciler for its kind; registered after start, its names are enqueued at once. */
  register(reconciler: Reconciler): void;
  /** What the API and other writers call; keys added before `start` are held until it. */
  enqueue: Enqueue;
  /** Enqueues every name of every reconciler (resync). */
  enqueueAll(): Promise<void>;
  /** Full enqueue, event watch and resync timer. */
  start(): void;
  /**
   * Ends the event stream and the timer, stops handing out keys, aborts running reconciles (their
   * `ctx.signal`) and waits for them to return.
   */
  stop(): Promise<void>;
  stats(): { waiting: number; queued: number; running: number; failing: number };
}

export function createManager(o: ManagerOptions): Manager {
  const log = o.log ?? silentLogger;
  const clock = o.clock ?? systemClock;
  const resyncMs = o.resyncMs ?? 300_000;
  const reconcilers = new Map<Kind, Reconciler>();
  const held: [Key, { afterMs?: number } | undefined][] = [];
  let started = false;
  let stopped = false;
  let watch: EventWatch | undefined;
  let resyncTimer: TimerHandle | undefined;

  const dispatch = async (key: Key, signal: AbortSignal): Promise<Result> => {
    const { kind, name } = parseKey(key);
    const r = reconcilers.get(kind);
    if (!r) {
      log.debug('no reconciler for key; dropped', { target: key });
      return {};
    }
    return r.reconcile(name, { signal });
  };

  const queue = createWorkQueue({
    handler: dispatch,
    clock,
    log,
    concurrency: o.concurrency,
    baseDelayMs: o.retry?.baseDelayMs,
    maxDelayMs: o.retry?.maxDelayMs,
  });

  const enqueue: Enqueue = (key, opts) => {
    if (stopped) return;
    if (!started) held.push([key, opts]);
    else queue.add(key, opts);
  };

  const namesOf = async (r: Reconciler): Promise<Key[]> => {
    try {
      return (await r.listNames()).map((name) => keyOf(r.kind, name));
    } catch (err) {
      log.warn('listing names for resync failed', { kind: r.kind, error: err instanceof Error ? err.message : String(err) });
      return [];
    }
  };

  // Lists first, then adds in one go, so the keys of one pass coalesce with each other.
  const enqueueAll = async (before: Key[] = []) => {
    const lists = await Promise.all([...reconcilers.values()].map(namesOf));
    for (const key of [...before, ...lists.flat()]) enqueue(key);
  };

  const scheduleResync = () => {
    resyncTimer = clock.setTimeout(() => {
      if (stopped) return;
      void enqueueAll().finally(() => {
        if (!stopped) scheduleResync();
      });
    }, resyncMs);
  };

  return {
    register(r) {
      if (reconcilers.has(r.kind)) throw new Error(`a reconciler for kind ${r.kind} is already registered`);
      reconcilers.set(r.kind, r);
      if (started && !stopped) void namesOf(r).then((keys) => keys.forEach((k) => enqueue(k)));
    },
    enqueue,
    enqueueAll: () => enqueueAll(),
    start() {
      if (started || stopped) return;
      started = true;
      const early = held.splice(0);
      for (const [key, opts] of early) if (opts?.afterMs) queue.add(key, opts);
      void enqueueAll(early.filter(([, opts]) => !opts?.afterMs).map(([key]) => key));
      scheduleResync();
      watch = watchEvents({
        runtime: o.runtime,
        clock,
        log,
        engine: o.engine ?? 'the default socket',
        minDelayMs: o.eventsRetry?.minDelayMs,
        maxDelayMs: o.eventsRetry?.maxDelayMs,
        onEvent: (ev) => {
          // A Swarm node that went down, came back, joined or left (SVC_RUNTIME=swarm): no app's own event;
          // its replicas' tasks get `die` events of their own, which enqueue their apps.
          if (ev.action.startsWith('node_')) o.onNodesChanged?.();
          o.onEvent?.(ev);
          const keys = keysForEvent(ev, o.instance);
          if (keys.length) log.debug('engine event', { action: ev.action, container: ev.name, targets: keys });
          for (const k of keys) {
            mark('event', ev.action, k);
            enqueue(k);
          }
        },
        onConnected: (again) => {
          o.onNodesChanged?.();
          if (again) void enqueueAll();
        },
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (resyncTimer !== undefined) clock.clearTimeout(resyncTimer);
      await watch?.stop();
      await queue.stop();
    },
    stats: () => queue.stats(),
  };
}
