// The daemon's DNS client side: one UDP query to the responder (dnsmasq) on loopback, for probes and
// tests. Just enough of RFC 1035 to ask one question and read the answers. The responder answers the
// TXT of PROBE_NAME with the hosts directory it serves: that is how the daemon tells its own responder
// from another instance's or from a DNS server that is not svc's.
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';

export const TYPE = { A: 1, TXT: 16, AAAA: 28 } as const;
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const CLASS_IN = 1;

/** Name whose TXT answer is the served hosts directory; lets the daemon recognise its own responder. */
export const PROBE_NAME = '_svc-responder.svc.internal.';

/** Pure: a query message with one question (recursion desired, as resolvers send it). */
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

/** Pure: parses a reply (names may be compressed); undefined when it is not a well-formed response. */
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
    if (off + 10 + len > msg.length) return undefined;
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

/** One UDP query to host:port; undefined when no reply came within `timeoutMs` or the port is closed. */
export async function queryDns(port: number, name: string, type: number, timeoutMs = 300, host = '127.0.0.1'): Promise<DecodedResponse | undefined> {
  const socket = createSocket('udp4');
  const id = randomBytes(2).readUInt16BE(0);
  try {
    return await new Promise<DecodedResponse | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      socket.on('error', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      socket.on('message', (msg) => {
        const r = decodeResponse(msg);
        if (!r || r.id !== id) return;
        clearTimeout(timer);
        resolve(r);
      });
      // Connected, so a closed port is reported at once (ICMP port unreachable) instead of timing out.
      socket.connect(port, host, () => socket.send(encodeQuery(id, name, type)));
    });
  } finally {
    socket.close();
  }
}

export type ProbeResult = { answered: false } | { answered: true; served?: string };

/** Asks 127.0.0.1:port for the probe name's TXT; any reply means something answers DNS there. */
export async function probeDnsResponder(port: number, timeoutMs = 300): Promise<ProbeResult> {
  const r = await queryDns(port, PROBE_NAME, TYPE.TXT, timeoutMs);
  if (!r) return { answered: false };
  const txt = r.answers.find((a) => a.type === TYPE.TXT);
  return { answered: true, served: txt ? txtText(txt.data) : undefined };
}

/** The dotted IPv4 address answered for `name` (A), or undefined (NXDOMAIN, no answer, no reply). */
export async function resolveA(port: number, name: string, timeoutMs = 300): Promise<string | undefined> {
  const r = await queryDns(port, name, TYPE.A, timeoutMs);
  const a = r?.answers.find((x) => x.type === TYPE.A && x.data.length === 4);
  return a ? [...a.data].join('.') : undefined;
}
