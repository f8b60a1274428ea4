// The engine's container event stream as RuntimeEvents: NDJSON over a long-lived GET /events, filtered to
// type=container, ended cleanly when the caller aborts.
import type Docker from 'dockerode';
import type { Readable } from 'node:stream';
import type { RuntimeEvent } from './runtime.js';
import { engineError } from './docker-errors.js';
import { LineSplitter } from './docker-streams.js';

interface EngineEvent {
  Type?: string;
  Action?: string;
  status?: string;
  id?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
  /** When the engine recorded it (its clock). */
  timeNano?: number;
  time?: number;
}

/** Attributes the engine mixes into a container's labels on events; not labels. */
const NOT_LABELS = new Set(['name', 'image', 'exitCode', 'signal', 'execID']);

/** One decoded event line, or undefined when it is not a container event. */
export function toRuntimeEvent(e: EngineEvent): RuntimeEvent | undefined {
  if (e.Type && e.Type !== 'container') return undefined;
  const attrs = e.Actor?.Attributes ?? {};
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs)) if (!NOT_LABELS.has(k)) labels[k] = v;
  const ev: RuntimeEvent = { action: e.Action ?? e.status ?? '', id: e.Actor?.ID ?? e.id ?? '', name: attrs.name ?? '', labels };
  if (attrs.signal !== undefined) ev.signal = attrs.signal;
  const atMs = e.timeNano ? Math.floor(e.timeNano / 1e6) : e.time ? e.time * 1000 : undefined;
  if (atMs !== undefined) ev.atMs = atMs;
  return ev;
}

/** Container events until `signal` aborts (returns) or the engine goes away (ends or throws). */
export async function* containerEvents(
  docker: Docker,
  signal: AbortSignal,
  onConnected?: () => void,
): AsyncGenerator<RuntimeEvent> {
  if (signal.aborted) return;
  let stream: Readable;
  try {
    stream = (await docker.getEvents({ filters: { type: ['container'] }, abortSignal: signal } as never)) as unknown as Readable;
  } catch (err) {
    if (signal.aborted) return;
    throw engineError('events', err);
  }
  stream.setEncoding('utf8'); // decodes characters split across chunks
  onConnected?.();
  const split = new LineSplitter();
  const onAbort = () => stream.destroy();
  signal.addEventListener('abort', onAbort);
  try {
    for await (const chunk of stream) {
      for (const line of split.push(String(chunk))) {
        if (!line.trim()) continue;
        const ev = toRuntimeEvent(JSON.parse(line) as EngineEvent);
        if (ev) yield ev;
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    throw engineError('events', err);
  } finally {
    signal.removeEventListener('abort', onAbort);
    stream.destroy();
  }
}

/**
 * Actions of one container from `sinceMs` until now, from the engine's event history: a bounded query
 * (`until` makes the engine end the stream), not a subscription.
 */
export async function pastContainerActions(docker: Docker, containerId: string, sinceMs: number): Promise<string[]> {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  let stream: Readable;
  try {
    stream = (await docker.getEvents({
      since: seconds(sinceMs),
      until: seconds(Date.now() + 1_000),
      filters: { type: ['container'], container: [containerId] },
    } as never)) as unknown as Readable;
  } catch (err) {
    throw engineError('events', err);
  }
  stream.setEncoding('utf8');
  const split = new LineSplitter();
  const actions: string[] = [];
  try {
    for await (const chunk of stream) {
      for (const line of split.push(String(chunk))) {
        if (!line.trim()) continue;
        const ev = toRuntimeEvent(JSON.parse(line) as EngineEvent);
        if (ev) actions.push(ev.action);
      }
    }
  } catch (err) {
    throw engineError('events', err);
  } finally {
    stream.destroy();
  }
  return actions;
}
