// Pure: what one line of Caddy's TLS log says about a certificate. Caddy (2.6.2 here) writes JSON lines
// through its own logging config (the `svc_tls` log svc adds: src/proxy/config.ts tlsLogConfig); the
// certificate manager's loggers are `tls.obtain` and `tls.renew`:
//   {"level":"error","logger":"tls.obtain","msg":"could not get certificate from issuer","identifier":"a.example","issuer":"...","error":"..."}
//   {"level":"info","logger":"tls.obtain","msg":"certificate obtained successfully","identifier":"a.example"}
// Anything else (other loggers, "will retry", lock messages, a torn or foreign line) says nothing.
import { z } from 'zod';

export type CertLogEvent = { kind: 'failed'; domain: string; error: string; atMs: number } | { kind: 'obtained'; domain: string; atMs: number };

const Line = z.object({
  level: z.string(),
  ts: z.number().optional(),
  logger: z.string(),
  msg: z.string(),
  identifier: z.string().min(1).max(253).optional(),
  error: z.string().optional(),
});

const FAILED = new Set(['could not get certificate from issuer']);
const OBTAINED = new Set(['certificate obtained successfully', 'certificate renewed successfully']);

export function parseTlsLogLine(line: string, nowMs = Date.now()): CertLogEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const p = Line.safeParse(json);
  if (!p.success || !(p.data.logger === 'tls.obtain' || p.data.logger === 'tls.renew') || !p.data.identifier) return undefined;
  const domain = p.data.identifier.toLowerCase();
  const atMs = p.data.ts !== undefined ? Math.round(p.data.ts * 1000) : nowMs;
  if (FAILED.has(p.data.msg) && p.data.level === 'error') return { kind: 'failed', domain, error: (p.data.error ?? 'no reason given').slice(0, 500), atMs };
  if (OBTAINED.has(p.data.msg)) return { kind: 'obtained', domain, atMs };
  return undefined;
}
