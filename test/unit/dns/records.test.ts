import { describe, expect, it } from 'vitest';
import {
  PROBE_NAME,
  RCODE,
  TYPE,
  answerFor,
  decodeQuery,
  decodeResponse,
  encodeError,
  encodeQuery,
  encodeResponse,
  ipv4Bytes,
  normaliseRecords,
  txtText,
} from '../../../src/dns/records.js';

const records = new Map([['web.svc.internal.', '172.18.0.5']]);

/** Query -> decoded reply through the pure functions, as the responder does it. */
function roundTrip(name: string, type: number, probeText?: string) {
  const d = decodeQuery(encodeQuery(0x1234, name, type));
  if (!d.ok) throw new Error('query did not decode');
  return decodeResponse(encodeResponse(d.query, answerFor(d.query.question, records, probeText)))!;
}

describe('answers', () => {
  it.each([
    ['A of a known name: the address, TTL 1', 'web.svc.internal.', TYPE.A, RCODE.NOERROR, [{ type: TYPE.A, ttl: 1, data: '172.18.0.5' }]],
    ['A, name without the trailing dot and in upper case', 'WEB.svc.internal', TYPE.A, RCODE.NOERROR, [{ type: TYPE.A, ttl: 1, data: '172.18.0.5' }]],
    ['AAAA of a known name: NOERROR, no answer', 'web.svc.internal.', TYPE.AAAA, RCODE.NOERROR, []],
    ['TXT of a known name: NOERROR, no answer', 'web.svc.internal.', TYPE.TXT, RCODE.NOERROR, []],
    ['A of an unknown name: NXDOMAIN', 'other.svc.internal.', TYPE.A, RCODE.NXDOMAIN, []],
    ['AAAA of an unknown name: NXDOMAIN', 'other.svc.internal.', TYPE.AAAA, RCODE.NXDOMAIN, []],
  ])('%s', (_n, name, type, rcode, answers) => {
    const r = roundTrip(name, type);
    expect(r.id).toBe(0x1234);
    expect(r.rcode).toBe(rcode);
    expect(r.answers.map((a) => ({ type: a.type, ttl: a.ttl, data: [...a.data].join('.') }))).toEqual(answers);
  });

  it('answers TXT of the probe name with the state file, only when the responder has a probe text', () => {
    const r = roundTrip(PROBE_NAME, TYPE.TXT, '/data/dns.json');
    expect(r.rcode).toBe(RCODE.NOERROR);
    expect(txtText(r.answers[0].data)).toBe('/data/dns.json');
    expect(roundTrip(PROBE_NAME, TYPE.TXT).rcode).toBe(RCODE.NXDOMAIN);
  });

  it('splits a long TXT into 255-byte strings', () => {
    const long = 'x'.repeat(600);
    expect(txtText(roundTrip(PROBE_NAME, TYPE.TXT, long).answers[0].data)).toBe(long);
  });

  it('sets QR and AA, copies RD, echoes the question', () => {
    const q = encodeQuery(7, 'web.svc.internal.', TYPE.A);
    const d = decodeQuery(q);
    if (!d.ok) throw new Error('no');
    const reply = encodeResponse(d.query, { rcode: 0 });
    expect(reply.readUInt16BE(2)).toBe(0x8000 | 0x0400 | 0x0100);
    expect(reply.subarray(12)).toEqual(q.subarray(12));
  });
});

describe('decodeQuery', () => {
  const header = (flags: number, qd: number) => {
    const b = Buffer.alloc(12);
    b.writeUInt16BE(9, 0);
    b.writeUInt16BE(flags, 2);
    b.writeUInt16BE(qd, 4);
    return b;
  };
  it.each([
    ['shorter than a header: dropped', Buffer.alloc(5), undefined],
    ['a response: dropped', Buffer.concat([header(0x8000, 1)]), undefined],
    ['opcode other than QUERY: NOTIMP', header(0x1000, 1), RCODE.NOTIMP],
    ['two questions: FORMERR', header(0x0100, 2), RCODE.FORMERR],
    ['truncated name: FORMERR', Buffer.concat([header(0, 1), Buffer.from([5, 97, 98])]), RCODE.FORMERR],
    ['no type/class: FORMERR', Buffer.concat([header(0, 1), Buffer.from([1, 97, 0, 0])]), RCODE.FORMERR],
  ])('%s', (_n, msg, rcode) => {
    const d = decodeQuery(msg);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.rcode).toBe(rcode);
  });

  it('ignores an EDNS OPT record in the additional section', () => {
    const q = encodeQuery(3, 'web.svc.internal.', TYPE.A);
    q.writeUInt16BE(1, 10);
    const withOpt = Buffer.concat([q, Buffer.from([0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0])]);
    const d = decodeQuery(withOpt);
    expect(d.ok && d.query.question).toEqual({ name: 'web.svc.internal.', type: TYPE.A, class: 1 });
    expect(d.ok && d.query.questionBytes).toEqual(q.subarray(12));
  });

  it('an error reply carries the id and rcode', () => {
    const r = decodeResponse(encodeError(9, 0x0100, RCODE.FORMERR))!;
    expect(r).toMatchObject({ id: 9, rcode: RCODE.FORMERR, answers: [] });
  });
});

describe('records', () => {
  it.each([
    ['1.2.3.4', [1, 2, 3, 4]],
    ['256.1.1.1', undefined],
    ['::1', undefined],
    ['1.2.3', undefined],
  ])('ipv4Bytes(%s)', (a, bytes) => expect(ipv4Bytes(a) && [...ipv4Bytes(a)!]).toEqual(bytes));

  it('normalises names and drops invalid values', () => {
    expect(normaliseRecords({ records: { 'A.svc.internal': '10.0.0.2', 'b.svc.internal.': 'nope', 'c.': 5 } })).toEqual(
      new Map([['a.svc.internal.', '10.0.0.2']]),
    );
    expect(normaliseRecords(null)).toEqual(new Map());
    expect(normaliseRecords({ records: [] })).toEqual(new Map());
  });
});
