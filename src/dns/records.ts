// Pure DNS wire format for svc's responder: just enough of RFC 1035 to answer one question per message.
// Caddy's dynamic upstreams need three answers (notes/zero-downtime-switch.md): A with the live address
// (TTL 1), NOERROR with no answer for AAAA (ignoring AAAA makes each lookup take 10 s), NXDOMAIN for
// names we do not know. TXT of the probe name tells `ensureDnsResponder` which state file is served.

export const TYPE = { A: 1, TXT: 16, AAAA: 28 } as const;
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4 } as const;
const CLASS_IN = 1;

/** Name whose TXT answer is the state file path; lets the daemon recognise its own responder. */
export const PROBE_NAME = '_svc-responder.svc.internal.';

export interface Question {
  /** Lower-cased, absolute (trailing dot). */
  name: string;
  type: number;
  class: number;
}

export interface Query {
  id: number;
  flags: number;
  question: Question;
  /** The question section bytes as received, echoed in the reply. */
  questionBytes: Buffer;
}

export type DecodeResult = { ok: true; query: Query } | { ok: false; id?: number; flags?: number; rcode?: number };

/** Pure: parses a query. Malformed but with a header: a FORMERR/NOTIMP can be sent; shorter: drop it. */
export function decodeQuery(msg: Buffer): DecodeResult {
  if (msg.length < 12) return { ok: false };
  const id = msg.readUInt16BE(0);
  const flags = msg.readUInt16BE(2);
  if (flags & 0x8000) return { ok: false }; // a response, never answer it
  const opcode = (flags >> 11) & 0xf;
  if (opcode !== 0) return { ok: false, id, flags, rcode: RCODE.NOTIMP };
  if (msg.readUInt16BE(4) !== 1) return { ok: false, id, flags, rcode: RCODE.FORMERR };
  const labels: string[] = [];
  let off = 12;
  for (;;) {
    if (off >= msg.length) return { ok: false, id, flags, rcode: RCODE.FORMERR };
    const len = msg[off];
    if (len === 0) break;
    if (len > 63 || off + 1 + len > msg.length) return { ok: false, id, flags, rcode: RCODE.FORMERR };
    labels.push(msg.toString('latin1', off + 1, off + 1 + len));
    off += 1 + len;
  }
  off += 1;
  if (off + 4 > msg.length) return { ok: false, id, flags, rcode: RCODE.FORMERR };
  const question: Question = { name: `${labels.join('.').toLowerCase()}.`, type: msg.readUInt16BE(off), class: msg.readUInt16BE(off + 2) };
  return { ok: true, query: { id, flags, question, questionBytes: msg.subarray(12, off + 4) } };
}

/** The answers for one question: what the responder's records say. */
export type Answer =
  | { rcode: number; records: { type: number; ttl: number; data: Buffer }[] }
  | { rcode: number; records?: undefined };

/** Pure: the decision. `records` maps absolute lower-case names to IPv4 addresses. */
export function answerFor(q: Question, records: ReadonlyMap<string, string>, probeText?: string): Answer {
  if (q.name === PROBE_NAME && probeText !== undefined) {
    return q.type === TYPE.TXT ? { rcode: RCODE.NOERROR, records: [{ type: TYPE.TXT, ttl: 0, data: txtData(probeText) }] } : { rcode: RCODE.NOERROR };
  }
  const addr = records.get(q.name);
  if (addr === undefined) return { rcode: RCODE.NXDOMAIN };
  if (q.class !== CLASS_IN || q.type !== TYPE.A) return { rcode: RCODE.NOERROR }; // AAAA and others: no data
  const data = ipv4Bytes(addr);
  return data ? { rcode: RCODE.NOERROR, records: [{ type: TYPE.A, ttl: 1, data }] } : { rcode: RCODE.SERVFAIL };
}

/** Pure: a reply to `q` with the given rcode and answer records (authoritative, no recursion). */
export function encodeResponse(q: Pick<Query, 'id' | 'flags' | 'questionBytes'>, answer: Answer): Buffer {
  const records = answer.records ?? [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(q.id, 0);
  // QR=1, opcode copied, AA=1, RD copied, RA=0.
  header.writeUInt16BE(0x8000 | (q.flags & 0x7800) | 0x0400 | (q.flags & 0x0100) | (answer.rcode & 0xf), 2);
  header.writeUInt16BE(q.questionBytes.length ? 1 : 0, 4);
  header.writeUInt16BE(records.length, 6);
  const parts = [header, q.questionBytes];
  for (const r of records) {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
    rr.writeUInt16BE(r.type, 2);
    rr.writeUInt16BE(CLASS_IN, 4);
    rr.writeUInt32BE(r.ttl, 6);
    rr.writeUInt16BE(r.data.length, 10);
    parts.push(rr, r.data);
  }
  return Buffer.concat(parts);
}

/** Pure: an error reply for a query that could not be decoded (no question echoed). */
export const encodeError = (id: number, flags: number, rcode: number) =>
  encodeResponse({ id, flags, questionBytes: Buffer.alloc(0) }, { rcode });

/** Pure: a query message, for probes and tests. */
export function encodeQuery(id: number, name: string, type: number): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  const q = Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])),
    Buffer.from([0]),
    Buffer.from([type >> 8, type & 0xff, 0, CLASS_IN]),
  ]);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2); // RD
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, q]);
}

export interface DecodedResponse {
  id: number;
  rcode: number;
  answers: { type: number; ttl: number; data: Buffer }[];
}

/** Pure: parses a reply as encodeResponse writes it (answers with name pointers); for probes and tests. */
export function decodeResponse(msg: Buffer): DecodedResponse | undefined {
  if (msg.length < 12 || !(msg.readUInt16BE(2) & 0x8000)) return undefined;
  const qd = msg.readUInt16BE(4);
  const an = msg.readUInt16BE(6);
  let off = 12;
  const skipName = () => {
    while (off < msg.length) {
      const len = msg[off];
      if (len === 0) return void (off += 1);
      if ((len & 0xc0) === 0xc0) return void (off += 2);
      off += 1 + len;
    }
  };
  for (let i = 0; i < qd; i++) {
    skipName();
    off += 4;
  }
  const answers: DecodedResponse['answers'] = [];
  for (let i = 0; i < an; i++) {
    skipName();
    if (off + 10 > msg.length) return undefined;
    const type = msg.readUInt16BE(off);
    const ttl = msg.readUInt32BE(off + 4);
    const len = msg.readUInt16BE(off + 8);
    answers.push({ type, ttl, data: msg.subarray(off + 10, off + 10 + len) });
    off += 10 + len;
  }
  return { id: msg.readUInt16BE(0), rcode: msg.readUInt16BE(2) & 0xf, answers };
}

/** Pure: the character-strings of a TXT record joined. */
export function txtText(data: Buffer): string {
  let out = '';
  for (let off = 0; off < data.length; ) {
    const len = data[off];
    out += data.toString('utf8', off + 1, off + 1 + len);
    off += 1 + len;
  }
  return out;
}

function txtData(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(parts);
}

/** Pure: `a.b.c.d` -> 4 bytes, undefined when not a dotted IPv4 address. */
export function ipv4Bytes(addr: string): Buffer | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  if (!m) return undefined;
  const b = m.slice(1).map(Number);
  return b.every((n) => n <= 255) ? Buffer.from(b) : undefined;
}

/** Pure: normalises a state file's records: absolute lower-case names, valid IPv4 values only. */
export function normaliseRecords(input: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const recs = (input as { records?: unknown } | null)?.records;
  if (!recs || typeof recs !== 'object') return out;
  for (const [name, addr] of Object.entries(recs as Record<string, unknown>)) {
    if (typeof addr !== 'string' || !ipv4Bytes(addr)) continue;
    const n = name.toLowerCase();
    out.set(n.endsWith('.') ? n : `${n}.`, addr);
  }
  return out;
}
