// The audit log (docs/api.md "Audit log"): one row per change of desired state or reveal of a secret, with
// field names and never values. Rows older than 90 days are swept as new ones arrive (an indexed delete).
// It lives in svc.db, so backups carry it.
import { and, desc, eq, gte, like, lt, lte, type SQL } from 'drizzle-orm';
import type { Db } from './db.js';
import { auditLog } from './schema/index.js';
import { iso } from './sessions.js';

export const AUDIT_KEEP_MS = 90 * 24 * 60 * 60 * 1000;

export interface AuditEntry {
  user_id: number | null;
  username: string | null;
  origin: string;
  address: string | null;
  action: string;
  target: string | null;
  fields: string[];
  status: number;
}

export interface AuditJson extends AuditEntry {
  id: number;
  at: string;
}

export function recordAudit(db: Db, e: AuditEntry, now: Date): void {
  db.delete(auditLog).where(lt(auditLog.at, iso(new Date(now.getTime() - AUDIT_KEEP_MS)))).run();
  db.insert(auditLog)
    .values({ at: iso(now), userId: e.user_id, username: e.username, origin: e.origin, address: e.address, action: e.action, target: e.target, fields: e.fields, status: e.status })
    .run();
}

export interface AuditFilter {
  user?: string;
  origin?: string;
  /** A substring of the action (`env`, `POST /api/apps`). */
  action?: string;
  target?: string;
  since?: string;
  until?: string;
  /** Rows with a smaller id (paging). */
  before?: number;
  limit: number;
}

/** Newest first. */
export function listAudit(db: Db, f: AuditFilter): AuditJson[] {
  const where: SQL[] = [];
  if (f.user) where.push(eq(auditLog.username, f.user));
  if (f.origin) where.push(eq(auditLog.origin, f.origin));
  if (f.action) where.push(like(auditLog.action, `%${f.action.replace(/[%_\\]/g, '')}%`));
  if (f.target) where.push(eq(auditLog.target, f.target));
  if (f.since) where.push(gte(auditLog.at, f.since));
  if (f.until) where.push(lte(auditLog.at, f.until));
  if (f.before) where.push(lt(auditLog.id, f.before));
  return db
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.id))
    .limit(f.limit)
    .all()
    .map((r) => ({ id: r.id, at: r.at, user_id: r.userId, username: r.username, origin: r.origin, address: r.address, action: r.action, target: r.target, fields: r.fields, status: r.status }));
}
