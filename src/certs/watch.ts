// Certificates that cannot be issued (issue 21 section 2). Caddy's admin API does not say; its TLS log
// does (tls-log.ts). Every few seconds (the queue key `certs:watch`, requeued) the watcher reads the lines Caddy appended, keeps the last word
// per domain, and for a domain that belongs to an app records it on the app (`certificate_error`, shown
// by the app page's status line) and raises `certificate_failed` through the storm rule (key
// `cert:<domain>`: one message while it keeps failing, then one `certificate_recovered` once a
// certificate is obtained; a new failure within 15 minutes of the last message says nothing).
// At start the whole file is read again: the state is rebuilt from the last word per domain, and the
// storm rule's rows (in the database) keep a restart from announcing anything twice.
import type { Logger } from '../log.js';
import type { Clock } from '../controller/clock.js';
import { periodic } from '../controller/periodic.js';
import type { Reconciler } from '../controller/types.js';
import { appOfDomain, appsWithCertError, observeCertError } from '../observed/certs.js';
import { raise } from '../notify/raise.js';
import type { Db } from '../store/db.js';
import type { Bus } from '../events/bus.js';
import { fileTail } from './tail.js';
import { dataVersion } from '../store/data-version.js';
import { parseTlsLogLine, type CertLogEvent } from './tls-log.js';

export interface CertWatchDeps {
  db: Db;
  /** Where a certificate's notice is told (src/notify/raise.ts). */
  bus: Bus;
  /** The TLS log file as svc sees it. */
  file: string;
  log: Logger;
  /** Between passes (default 3 s). */
  intervalMs?: number;
  clock?: Clock;
}

/** Pure: the last event of each domain in `events` (in file order). */
export function lastWordPerDomain(events: CertLogEvent[]): Map<string, CertLogEvent> {
  const out = new Map<string, CertLogEvent>();
  for (const e of events) out.set(e.domain, e);
  return out;
}

/**
 * The reconciler of `certs:watch`: a pass at start, then one every `intervalMs` (requeueAfterMs; the work
 * queue is the only timer). `pass()` runs one now (tests); a failed pass is logged, never retried sooner.
 */
export function watchCertificates(d: CertWatchDeps): Reconciler & { pass(): Promise<void> } {
  const tail = fileTail(d.file);
  // The clean-up below reads the apps with an error: only when something was written since the last one,
  // or the log said something (an idle daemon ran that query every 3 s for nothing).
  const version = dataVersion(d.db);
  let cleanedAt: string | undefined;
  const failing = new Set<string>();
  let running: Promise<void> | undefined;

  const apply = (e: CertLogEvent) => {
    if (e.kind === 'failed') failing.add(e.domain);
    else failing.delete(e.domain);
    const app = appOfDomain(d.db, e.domain);
    if (!app) return; // another site of a shared Caddy, or an app whose domain changed since
    if (e.kind === 'failed') {
      if (observeCertError(d.db, app.id, e.error)) d.log.warn('certificate cannot be issued', { app: app.name, domain: e.domain, error: e.error });
      raise(d, {
        event: 'certificate_failed',
        subject: `${app.name}: no certificate for ${e.domain}`,
        message:
          `Caddy could not get a certificate for ${e.domain}: ${e.error}. HTTPS to the domain fails until one is issued; ` +
          `Caddy keeps trying with backoff. Check that the domain's DNS points at this host and that ports 80 and 443 reach it.`,
        link: `/apps/${app.name}`,
        storm: { key: `cert:${e.domain}`, signal: 'fire' },
      });
    } else {
      if (observeCertError(d.db, app.id, null)) d.log.info('certificate obtained', { app: app.name, domain: e.domain });
      raise(d, {
        event: 'certificate_recovered',
        subject: `${app.name}: certificate for ${e.domain} issued`,
        message: `Caddy obtained a certificate for ${e.domain}; HTTPS works again.`,
        link: `/apps/${app.name}`,
        storm: { key: `cert:${e.domain}`, signal: 'resolve' },
      });
    }
  };

  const once = async () => {
    const events: CertLogEvent[] = [];
    for (let lines = await tail.read(); lines.length > 0; lines = await tail.read()) {
      for (const l of lines) {
        const e = parseTlsLogLine(l);
        if (e) events.push(e);
      }
    }
    for (const e of lastWordPerDomain(events).values()) apply(e);
    const at = version();
    if (events.length === 0 && at === cleanedAt) return;
    // An app whose domain changed (or whose failing domain got a certificate) no longer shows the error.
    for (const a of appsWithCertError(d.db)) if (!a.domain || !failing.has(a.domain)) observeCertError(d.db, a.id, null);
    cleanedAt = version();
  };

  const pass = () => {
    running ??= once()
      .catch((err) => d.log.warn('certificate log check failed', { error: (err as Error).message }))
      .finally(() => (running = undefined));
    return running;
  };
  return { ...periodic({ kind: 'certs', name: 'watch', periodMs: d.intervalMs ?? 3000, pass, clock: d.clock }), pass };
}
