import { sql } from 'drizzle-orm';
import { text } from 'drizzle-orm/sqlite-core';

/** ISO 8601 UTC timestamp without milliseconds, as the API shows them (`2026-11-22T10:42:21Z`). */
export const nowIso = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
export const createdAt = () => text('created_at').notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ','now'))`);
export const updatedAt = () => text('updated_at').notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%SZ','now'))`);

/** Who created a resource: the REST API/UI, or a manifest source (API.md "Manifests"). */
export const OWNERS = ['rest', 'dir', 'git', 'api'] as const;
export type Owner = (typeof OWNERS)[number];
