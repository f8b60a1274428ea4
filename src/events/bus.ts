// In-process notifications for live views (deploy event streams, log streams that follow the live
// container). The database stays the source of truth; the bus only says "look again".
import { EventEmitter } from 'node:events';

export interface BusEvents {
  /** A deploy event row was written, or the deploy changed status. */
  deploy: [deployId: number];
  /** The container an app's traffic goes to changed. */
  live: [appId: number];
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
}
