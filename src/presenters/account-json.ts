// The shapes of users, API tokens and sessions as the API answers them (store/users.ts userJson,
// store/tokens.ts, store/sessions.ts build them), as schemas for the OpenAPI document.
import { z } from 'zod';
import { ROLES } from '../store/schema/index.js';

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
