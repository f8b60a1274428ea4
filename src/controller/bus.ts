// In-process notifications for live views (deploy event streams, log streams that follow the live
// container). The database stays the source of truth; the bus only says "look again".
import { EventEmitter } from 'node:events';

/** An off-host backup copy that failed, or recovered after failing (raised by src/offsite/alerts.ts only). */
export interface OffsiteEvent {
  type: 'backup.upload_failed' | 'backup.upload_recovered';
  backup_id: number;
  filename: string;
  target: string;
  /** The store's reason (upload_failed); never a secret. */
  error?: string;
  attempts: number;
  /** When the next attempt runs (upload_failed). */
  next_attempt_at?: string;
}

/** A pull-request preview was removed (issue 20): what its comment on the pull request needs to say so. */
export interface PreviewGoneEvent {
  previewId: number;
  parentId: number;
  prNumber: number;
  host: string;
  repository: string | null;
  commentId: string | null;
  app: string;
  preview: string;
  sha: string;
  reason: string;
}

export interface BusEvents {
  /** A deploy event row was written, or the deploy changed status. */
  deploy: [deployId: number];
  /** The container an app's traffic goes to changed. */
  live: [appId: number];
  /** A backup, restore or import row was written (requests that wait for one look again). */
  backups: [];
  /** A job run or one-off command was written (started, finished): `svc run` waits on it. */
  jobRun: [runId: number];
  /** An off-host copy failed or recovered (src/offsite/alerts.ts); notifications subscribe here. */
  offsite: [event: OffsiteEvent];
  /** raise() queued messages in the outbox (src/notify/raise.ts): the dispatcher looks at it now. */
  notice: [];
  /** The node reconciler settled a change asked of a Swarm node (PUT /api/nodes/{id} waits on it). */
  node: [nodeRef: string];
  /** A preview was removed (src/desired/previews.ts); its pull-request comment says so (src/previews/reporter.ts). */
  previewGone: [event: PreviewGoneEvent];
}

export class Bus {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  emit<K extends keyof BusEvents>(event: K, ...args: BusEvents[K]): void {
    this.emitter.emit(event, ...args);
  }
  on<K extends keyof BusEvents>(event: K, fn: (...args: BusEvents[K]) => void): () => void {
    this.emitter.on(event, fn as (...a: unknown[]) => void);
    return () => this.emitter.off(event, fn as (...a: unknown[]) => void);
  }

  /**
   * Resolves with `check()`'s first defined value, checked now and again at every `event`; undefined when
   * `signal` aborts first. A throw of `check` rejects. The database stays the truth: this only says when to
   * read it again, so a missed event costs latency, never a wrong answer.
   */
  until<T>(event: keyof BusEvents, check: () => T | undefined, signal?: AbortSignal): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve, reject) => {
      let off = () => {};
      const settle = (fn: () => void) => {
        off();
        signal?.removeEventListener('abort', aborted);
        fn();
      };
      const look = () => {
        try {
          const v = check();
          if (v !== undefined) settle(() => resolve(v));
        } catch (err) {
          settle(() => reject(err));
        }
      };
      const aborted = () => settle(() => resolve(undefined));
      if (signal?.aborted) return resolve(undefined);
      signal?.addEventListener('abort', aborted, { once: true });
      off = this.on(event, look);
      look();
    });
  }
}
