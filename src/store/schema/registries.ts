// Credentials for private container registries: what svc hands the engine when it pulls an image of that
// registry (one host) or creates a Swarm service of it (every node pulls with them). The password or token
// is sealed with SVC_ENCRYPTION_KEY (crypto.ts), like every credential, and so travels in full backups.
import { sqliteTable, integer, text } from 'drizzle-orm/sqlite-core';
import { createdAt, updatedAt } from './common.js';

export const registryCredentials = sqliteTable('registry_credentials', {
  id: integer('id').primaryKey(),
  /** The registry as image references name it, canonical (`ghcr.io`, `registry.example.com:5000`, `docker.io`). */
  server: text('server').notNull().unique(),
  username: text('username').notNull(),
  /** `{password}` sealed. */
  secretSealed: text('secret_sealed').notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export type RegistryCredentialRow = typeof registryCredentials.$inferSelect;
