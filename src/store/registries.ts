// Row queries of registry credentials (no rules: src/desired/registries.ts decides).
import { eq } from 'drizzle-orm';
import type { Db } from './db.js';
import { registryCredentials, type RegistryCredentialRow } from './schema/index.js';

export const listRegistryCredentials = (db: Db): RegistryCredentialRow[] => db.select().from(registryCredentials).orderBy(registryCredentials.server).all();

export const getRegistryCredential = (db: Db, id: number): RegistryCredentialRow | undefined =>
  db.select().from(registryCredentials).where(eq(registryCredentials.id, id)).get();

export const registryCredentialFor = (db: Db, server: string): RegistryCredentialRow | undefined =>
  db.select().from(registryCredentials).where(eq(registryCredentials.server, server)).get();
