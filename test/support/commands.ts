// The commands' context (src/desired/context.ts) for tests that write desired state directly: a real
// database, a recording enqueue, a real Bus, the test sealer, a config parsed like the daemon's (with
// overrides: data dir, images, instance), a silent logger and the wall clock unless given.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config } from '../../src/config.js';
import type { CommandCtx } from '../../src/desired/context.js';
import { Bus } from '../../src/controller/bus.js';
import { createLogger } from '../../src/log.js';
import type { Db } from '../../src/store/db.js';
import { recordingEnqueue, testKey, testSealer } from './db.js';
import type { Enqueue } from '../../src/controller/types.js';
import type { Sealer } from '../../src/crypto.js';
import * as apps from '../../src/desired/apps.js';
import * as env from '../../src/desired/env.js';
import * as links from '../../src/desired/links.js';
import * as services from '../../src/desired/services.js';
import type { Owner, ServiceRow } from '../../src/store/schema/index.js';

export type CtxOverrides = Partial<Omit<CommandCtx, 'config'>> & { config?: Partial<Config> };

export function commandCtx(db: Db, over: CtxOverrides = {}): CommandCtx & { enqueue: CommandCtx['enqueue'] } {
  const base = parseConfig({ SVC_ENCRYPTION_KEY: testKey.toString('base64'), SVC_DATA_DIR: join(tmpdir(), `svc-commands-test-${process.pid}`) }, '/nonexistent/.env');
  return {
    db,
    enqueue: over.enqueue ?? recordingEnqueue(),
    bus: over.bus ?? new Bus(),
    sealer: over.sealer ?? testSealer(),
    log: over.log ?? createLogger('error', {}, () => {}),
    now: over.now ?? (() => new Date()),
    portInUse: over.portInUse,
    config: { ...base, ...over.config },
  };
}

// Fixture writers for tests of other layers (reconcilers, backups, the store's reads): the real commands
// under the shapes those tests were written with, so a fixture can never hold what a command refuses.

export const createApp = (db: Db, enqueue: Enqueue, input: apps.AppInput, owner: Owner) =>
  apps.createAppRecord(commandCtx(db, { enqueue }), input, owner, 'api');
export const updateApp = (db: Db, enqueue: Enqueue, id: number, patch: Partial<apps.AppFields>) =>
  apps.updateAppRecord(commandCtx(db, { enqueue }), id, patch, 'api');
export const deleteApp = (db: Db, enqueue: Enqueue, id: number) => apps.deleteApp(commandCtx(db, { enqueue }), id, 'api');

export const setEnv = (
  db: Db, sealer: Sealer, enqueue: Enqueue, appId: number,
  v: { key: string; value?: string; isSecret?: boolean; required?: boolean }, by: string | null,
) => env.setEnv(commandCtx(db, { enqueue, sealer }), appId, { key: v.key, value: v.value, is_secret: v.isSecret, required: v.required }, 'api', by);
export const deleteEnv = (db: Db, enqueue: Enqueue, appId: number, key: string, by: string | null) =>
  env.deleteEnv(commandCtx(db, { enqueue }), appId, key, 'api', by);

export const createLink = (db: Db, enqueue: Enqueue, l: { appId: number; serviceId: number; alias?: string | null }) =>
  links.createLink(commandCtx(db, { enqueue }), l.appId, { service_id: l.serviceId, alias: l.alias }, 'api');
export const deleteLink = (db: Db, enqueue: Enqueue, appId: number, serviceId: number) =>
  links.deleteLink(commandCtx(db, { enqueue }), appId, serviceId, 'api');

export const createService = (
  db: Db, sealer: Sealer, enqueue: Enqueue, config: Pick<Config, 'dataDir' | 'images' | 'instance'>,
  s: { name: string; type: string; version?: string; owner?: Owner },
) => services.createService(commandCtx(db, { enqueue, sealer, config }), { name: s.name, type: s.type, ...(s.version ? { version: s.version } : {}) }, 'api', s.owner);
export const setDesiredRunning = (db: Db, enqueue: Enqueue, row: ServiceRow, running: boolean) =>
  services.setServiceRunning(commandCtx(db, { enqueue }), row.id, running, 'api');
export const markServiceDeleted = (db: Db, enqueue: Enqueue, row: ServiceRow, opts: { purge: boolean; force: boolean }) =>
  services.deleteService(commandCtx(db, { enqueue }), row.id, opts, 'api');
