// The daemon's DNS client side, for probes and tests: Node's own resolver (c-ares) pointed at the
// responder (dnsmasq) on loopback, one try, a short timeout. The responder answers the TXT of PROBE_NAME
// with the hosts directory it serves: that is how the daemon tells its own responder from another
// instance's or from a DNS server that is not svc's.
import { Resolver } from 'node:dns/promises';

/** Name whose TXT answer is the served hosts directory; lets the daemon recognise its own responder. */
export const PROBE_NAME = '_svc-responder.svc.internal.';

/** Error codes that mean a DNS server did answer (NXDOMAIN, NODATA, REFUSED, ...); the rest mean none did. */
const ANSWERED = new Set(['ENOTFOUND', 'ENODATA', 'EREFUSED', 'ESERVFAIL', 'ENOTIMP', 'EFORMERR', 'EBADRESP']);

/** `code` is set when no record came back: the server's answer (`ENOTFOUND`, `ENODATA`, ...) or why none came. */
export interface DnsAnswer {
  answered: boolean;
  records: string[];
  code?: string;
}

/** One question to 127.0.0.1:port: the records, the server's refusal (`ENOTFOUND` = NXDOMAIN, `ENODATA` = NODATA), or no server. */
export async function askDns(port: number, name: string, rrtype: 'A' | 'AAAA' | 'TXT', timeoutMs = 300): Promise<DnsAnswer> {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  try {
    if (rrtype === 'TXT') return { answered: true, records: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
    return { answered: true, records: rrtype === 'A' ? await resolver.resolve4(name) : await resolver.resolve6(name) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
    return { answered: ANSWERED.has(code), records: [], code };
  } finally {
    resolver.cancel();
  }
}

export type ProbeResult = { answered: false } | { answered: true; served?: string };

/** Asks 127.0.0.1:port for the probe name's TXT; any reply means something answers DNS there. */
export async function probeDnsResponder(port: number, timeoutMs = 300): Promise<ProbeResult> {
  const r = await askDns(port, PROBE_NAME, 'TXT', timeoutMs);
  if (!r.answered) return { answered: false };
  return { answered: true, served: r.records[0] };
}

/** The dotted IPv4 address answered for `name` (A), or undefined (NXDOMAIN, no answer, no reply). */
export async function resolveA(port: number, name: string, timeoutMs = 300): Promise<string | undefined> {
  const r = await askDns(port, name, 'A', timeoutMs);
  return r.records[0];
}
