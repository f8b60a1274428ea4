// Reads Server-Sent Events from a fetch response body: yields {event, data, id} per event; comments
// (keepalives) and events without data are skipped. The parsing is eventsource-parser's (the WHATWG
// rules: CRLF, split chunks, multi-line data, BOM), so svc keeps no hand-written SSE parser.
import { EventSourceParserStream } from 'eventsource-parser/stream';

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const text = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>);
  const events = text.pipeThrough(new EventSourceParserStream());
  for await (const e of events as unknown as AsyncIterable<{ event?: string; data: string; id?: string }>) {
    yield { event: e.event ?? 'message', data: e.data, id: e.id };
  }
}
