// The shapes of users, API tokens and sessions as the API answers them, as schemas for the OpenAPI
// document; sessionJson here. userJson (store/users.ts) is also the request's principal, and a token's
// shape is what the tokens command answers, so those two are built below the edges.
import { z } from 'zod';
import { ROLES } from '../store/schema/index.js';
import type { SessionRow } from '../store/sessions.js';

/** A session as the account page and /api/account/sessions show it; `current` marks the one asking. */
export const sessionJson = (s: SessionRow, currentId: number | undefined) => ({
  id: s.id, created_at: s.createdAt, last_seen_at: s.lastSeenAt, address: s.address, user_agent: s.userAgent, current: s.id === currentId,
});

export const userJsonSchema = z
  .object({
    id: z.number().int(),
    username: z.string(),
    role: z.enum(ROLES),
    apps: z.array(z.string()).nullable().describe('The apps the user is limited to; null: every app'),
    totp_enabled: z.boolean(),
    created_at: z.string(),
  })
  .meta({ id: 'User' });

/** `{user}`: what login, setup, accepting an invitation and /auth/me answer. */
export const userAnswerSchema = z.object({ user: userJsonSchema });

export const tokenJsonSchema = z
  .object({ id: z.number().int(), name: z.string(), scopes: z.array(z.string()), expires_at: z.string().nullable(), created_at: z.string(), last_used_at: z.string().nullable() })
  .meta({ id: 'ApiToken' });
export const createdTokenJsonSchema = tokenJsonSchema.extend({ token: z.string().describe('Shown once, in this answer only') }).meta({ id: 'CreatedApiToken' });

export const sessionJsonSchema = z
  .object({ id: z.number().int(), created_at: z.string(), last_seen_at: z.string(), address: z.string().nullable(), user_agent: z.string().nullable(), current: z.boolean() })
  .meta({ id: 'Session' });

/** POST /account/totp: the pending secret, shown to be scanned or typed (desired/totp.ts TotpSetup). */
export const totpSetupJsonSchema = z
  .object({ secret: z.string(), otpauth_url: z.string(), qr_svg: z.string().describe('The otpauth URL as an SVG QR code') })
  .meta({ id: 'TotpSetup' });
/** POST /account/totp/confirm: the recovery codes, shown this once. */
export const recoveryCodesJsonSchema = z.object({ recovery_codes: z.array(z.string()) }).meta({ id: 'RecoveryCodes' });

/** An open invitation (desired/users.ts invitationJson). */
export const invitationJsonSchema = z
  .object({
    id: z.number().int(),
    role: z.enum(ROLES),
    apps: z.array(z.string()).nullable(),
    created_by: z.string(),
    created_at: z.string(),
    expires_at: z.string(),
  })
  .meta({ id: 'Invitation' });
export const createdInvitationJsonSchema = invitationJsonSchema
  .extend({ token: z.string().describe('Shown once, in this answer only'), path: z.string().describe('/invite/<token>: the link to send') })
  .meta({ id: 'CreatedInvitation' });

/** One row of the audit log (store/audit.ts AuditJson): field names, never values. */
export const auditJsonSchema = z
  .object({
    id: z.number().int(),
    at: z.string(),
    user_id: z.number().int().nullable(),
    username: z.string().nullable(),
    origin: z.string(),
    address: z.string().nullable(),
    action: z.string().describe('METHOD /path pattern'),
    target: z.string().nullable(),
    fields: z.array(z.string()),
    status: z.number().int(),
  })
  .meta({ id: 'AuditEntry' });
