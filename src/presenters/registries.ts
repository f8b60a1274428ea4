// The JSON shape of a private registry credential: never the password.
import { z } from 'zod';
import type { RegistryCredentialRow } from '../store/schema/index.js';

export const registryJsonSchema = z.object({ id: z.number().int(), server: z.string(), username: z.string(), created_at: z.string(), updated_at: z.string() });

/** The API's view: never the password. */
export const registryJson = (row: RegistryCredentialRow) => ({ id: row.id, server: row.server, username: row.username, created_at: row.createdAt, updated_at: row.updatedAt });
