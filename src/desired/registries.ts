// THE COMMANDS of registry credentials: the username and password (or token) svc hands the engine for the
// images of a private registry (`ghcr.io`, `registry.example.com:5000`, Docker Hub as `docker.io`). The
// secret is sealed before it reaches a row and never leaves through a command or an answer; the runtime
// finds it by the registry of the image it pulls (registryAuthLookup below).
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Sealer } from '../crypto.js';
import { conflict, notFound, unavailable } from '../errors.js';
import { canonicalRegistry, registryOf } from '../runtime/references.js';
import type { RegistryAuth, RegistryAuthLookup, Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { getRegistryCredential, registryCredentialFor } from '../store/registries.js';
import { nowIso, registryCredentials, type RegistryCredentialRow } from '../store/schema/index.js';
import type { CommandCtx, Origin } from './context.js';
import { parseInput } from './parse.js';

export type RegistryCtx = Pick<CommandCtx, 'db' | 'sealer' | 'log'>;

/** A registry host as image references write it: DNS name or IPv4, optional port, no scheme or path. */
const serverSchema = z
  .string()
  .max(253)
  .regex(/^(?:localhost|[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+)(?::[0-9]{1,5})?$/, 'must be a registry host as image references name it, e.g. ghcr.io or registry.example.com:5000 (Docker Hub: docker.io)')
  .refine((v) => !v.includes(':') || Number(v.split(':')[1]) <= 65535, 'port must be at most 65535')
  .transform(canonicalRegistry);
const usernameSchema = z.string().min(1).max(255).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');
const passwordSchema = z.string().min(1).max(4096).regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');

export const registryCreateSchema = z.object({ server: serverSchema, username: usernameSchema, password: passwordSchema }).strict();
export const registryUpdateSchema = z.object({ username: usernameSchema.optional(), password: passwordSchema.optional() }).strict();

export function requireRegistry(ctx: Pick<RegistryCtx, 'db'>, id: number): RegistryCredentialRow {
  const row = getRegistryCredential(ctx.db, id);
  if (!row) throw notFound('registry credential');
  return row;
}

export function createRegistry(ctx: RegistryCtx, raw: unknown, origin: Origin): RegistryCredentialRow {
  const v = parseInput(registryCreateSchema, raw);
  if (registryCredentialFor(ctx.db, v.server)) throw conflict(`credentials for ${v.server} exist: change them with PUT /api/registries/{id}`);
  const row = ctx.db.insert(registryCredentials).values({ server: v.server, username: v.username, secretSealed: ctx.sealer.sealJson({ password: v.password }) }).returning().get();
  ctx.log.info('registry credentials added', { server: row.server, username: row.username, origin });
  return row;
}

/** Replaces what is given (a blank password in a form is left out: the old one stays). */
export function updateRegistry(ctx: RegistryCtx, id: number, raw: unknown, origin: Origin): RegistryCredentialRow {
  const v = parseInput(registryUpdateSchema, raw);
  const row = requireRegistry(ctx, id);
  const next = ctx.db
    .update(registryCredentials)
    .set({
      username: v.username ?? row.username,
      ...(v.password === undefined ? {} : { secretSealed: ctx.sealer.sealJson({ password: v.password }) }),
      updatedAt: nowIso(),
    })
    .where(eq(registryCredentials.id, id))
    .returning()
    .get()!;
  ctx.log.info('registry credentials updated', { server: row.server, origin });
  return next;
}

export function deleteRegistry(ctx: RegistryCtx, id: number, origin: Origin): void {
  const row = requireRegistry(ctx, id);
  ctx.db.delete(registryCredentials).where(eq(registryCredentials.id, id)).run();
  ctx.log.info('registry credentials removed', { server: row.server, origin });
}

/** The engine's form of a row's credentials (decrypted: hand it to the engine only). */
export function registryAuthOf(sealer: Sealer, row: RegistryCredentialRow): RegistryAuth {
  return { serveraddress: row.server, username: row.username, password: sealer.openJson<{ password: string }>(row.secretSealed).password };
}

/** What the runtime asks before a pull or a Swarm service: the credentials of the image's registry, if any. */
export function registryAuthLookup(db: Db, sealer: Sealer): RegistryAuthLookup {
  return (imageRef) => {
    const row = registryCredentialFor(db, registryOf(imageRef));
    return row && registryAuthOf(sealer, row);
  };
}

export type LoginResult = { ok: true; status: string } | { ok: false; error: string };

/** "Test": a login through the engine with the stored credentials; the registry's answer either way. */
export async function testRegistry(ctx: RegistryCtx, runtime: Pick<Runtime, 'registryLogin'> | undefined, id: number): Promise<LoginResult> {
  const row = requireRegistry(ctx, id);
  if (!runtime) throw unavailable('engine_unavailable', 'the container engine is not available');
  const auth = registryAuthOf(ctx.sealer, row);
  try {
    return { ok: true, status: await runtime.registryLogin(auth) };
  } catch (err) {
    // The engine's reason ("unauthorized: incorrect username or password"), never the password itself.
    const reason = (err instanceof Error ? err.message : String(err)).split(auth.password).join('[secret]');
    ctx.log.info('registry login failed', { server: row.server, error: reason });
    return { ok: false, error: `login to ${row.server} failed: ${reason}` };
  }
}

