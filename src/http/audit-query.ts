// The filters of the audit log (GET /api/audit and the /audit page), parsed once.
import { z } from 'zod';
import { ORIGINS } from '../desired/context.js';
import { parseInput } from '../desired/parse.js';
import type { AuditFilter } from '../store/audit.js';

const when = z.string().regex(/^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d)?Z?)?$/, 'must be an ISO 8601 date or UTC time');

export const auditQuery = z
  .object({
    user: z.string().max(64).optional(),
    origin: z.enum(ORIGINS).optional(),
    action: z.string().max(200).optional(),
    target: z.string().max(200).optional(),
    since: when.optional(),
    until: when.optional(),
    before: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .strict();

export const auditQueryOf = (raw: unknown): AuditFilter => parseInput(auditQuery, raw);
