// The guarded major upgrade of a managed service (issue 33 section 2), asked for through REST, the UI and
// the CLI: checks, then an upgrade record the service reconciler advances one step per pass
// (src/reconcilers/service/upgrade.ts). Revert and confirm are requests on a switched upgrade, carried out
// by the reconciler too. Nothing here touches a container.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { imageFor, kindOf, versionsOf } from '../catalog/catalog.js';
import { isLaterVersion, versionSuffix } from '../catalog/types.js';
import { keyOf } from '../controller/types.js';
import { conflict, invalid, notFound } from '../errors.js';
import { tx } from '../store/db.js';
import { services, type ServiceUpgradeRow } from '../store/schema/index.js';
import { addServiceEvent, insertUpgrade, openUpgradeOf, updateUpgrade } from '../store/service-upgrades.js';
import { getService } from '../store/services.js';
import type { ServiceView } from '../store/service-view.js';
import type { CommandCtx, Origin } from './context.js';
import { parseInput } from './parse.js';

export const upgradeSchema = z
  .object({ version: z.union([z.string(), z.number()]).transform(String), keep_days: z.number().int().min(0).max(365).optional() })
  .strict();

/** The container and data directory of a service's `version`, beside its spec ones (a name cannot hold a `.`). */
export const upgradeContainerName = (row: Pick<ServiceView, 'specContainerName'>, version: string) => `${row.specContainerName}-v${versionSuffix(version)}`;
export const upgradeDataDir = (row: Pick<ServiceView, 'specDataDir'>, version: string) => `${row.specDataDir}.v${version}`;

function serviceOf(ctx: Pick<CommandCtx, 'db'>, id: number): ServiceView {
  const row = getService(ctx.db, id);
  if (!row) throw notFound('service');
  return row;
}

/**
 * Starts a guarded major upgrade of an active service to a later version: 409 while another upgrade holds
 * the service, when it is not active and running, or when its type has one version; 400 for a version it is
 * not offered at or not later than the one it runs.
 */
export function upgradeService(ctx: CommandCtx, id: number, raw: unknown, origin: Origin): ServiceUpgradeRow {
  const { db, config } = ctx;
  const input = parseInput(upgradeSchema, raw);
  const row = serviceOf(ctx, id);
  const kind = kindOf(row.type);
  if (!kind.upgrade) {
    throw conflict(`${row.type} services have one version (${versionsOf(row.type)[0]}); there is nothing to upgrade to`);
  }
  if (!versionsOf(row.type).includes(input.version)) {
    throw invalid(`version: ${row.type} is offered at versions ${versionsOf(row.type).join(', ')}`, { valid_versions: [...versionsOf(row.type)] });
  }
  if (!isLaterVersion(row.type, row.version, input.version)) {
    throw invalid(`version: service ${row.name} runs ${row.version}; an upgrade goes to a later version (a downgrade is a restore of a backup)`);
  }
  const open = openUpgradeOf(db, row.id);
  if (open) {
    throw conflict(
      open.status === 'running'
        ? `service ${row.name} is being upgraded to ${open.toVersion} (step ${open.step})`
        : `service ${row.name} keeps its ${open.fromVersion} for a revert of its upgrade; confirm or revert that upgrade first`,
      { upgrade_id: open.id },
    );
  }
  if (row.deletedAt || !row.desiredRunning || row.status !== 'active') {
    throw conflict(`service ${row.name} is ${row.deletedAt ? 'being deleted' : row.status}; an upgrade starts from an active, running service`);
  }
  if (row.previewAppId !== null) throw conflict(`service ${row.name} belongs to a preview; upgrade the parent's service`);
  const toContainer = upgradeContainerName(row, input.version);
  if (db.select({ id: services.id }).from(services).where(eq(services.containerName, toContainer)).get()) {
    throw conflict(`the container name ${toContainer} the upgrade needs belongs to another service`);
  }
  const up = tx(db, () => {
    const u = insertUpgrade(db, {
      serviceId: row.id,
      fromVersion: row.version,
      toVersion: input.version,
      fromImage: row.imageRef,
      toImage: imageFor(kind, config.images, input.version).image,
      fromContainer: row.containerName,
      toContainer,
      fromDataDir: row.dataDir,
      toDataDir: upgradeDataDir(row, input.version),
      keepDays: input.keep_days ?? 7,
    });
    addServiceEvent(db, row.id, 'upgrade_requested', `upgrade ${u.id} from ${row.version} to ${input.version} asked for (${origin}); a backup of the service is taken first`, u.id);
    return u;
  });
  ctx.enqueue(keyOf('service', row.name));
  ctx.log.info('service upgrade requested', { service: row.name, from: row.version, to: input.version, upgrade: up.id, origin });
  return up;
}

/**
 * Asks the reconciler to go back to the old container of a switched upgrade (`revert`: what was written
 * since the switch is lost) or to drop it (`confirm`). 409 when no switched upgrade keeps an old one.
 */
export function requestUpgradeEnd(ctx: CommandCtx, id: number, what: 'revert' | 'confirm', origin: Origin): ServiceUpgradeRow {
  const row = serviceOf(ctx, id);
  const open = openUpgradeOf(ctx.db, row.id);
  if (!open || open.status !== 'switched') {
    throw conflict(open ? `the upgrade of ${row.name} has not switched yet (step ${open.step}); it rolls back by itself if it fails` : `service ${row.name} has no upgrade that keeps an old version`);
  }
  if (open.request && open.request !== what) throw conflict(`a ${open.request} of this upgrade is under way`);
  tx(ctx.db, () => {
    updateUpgrade(ctx.db, open.id, { request: what });
    addServiceEvent(
      ctx.db,
      row.id,
      `upgrade_${what}_requested`,
      what === 'revert'
        ? `revert to ${open.fromVersion} asked for (${origin}); data written since the switch to ${open.toVersion} is lost`
        : `confirm of ${open.toVersion} asked for (${origin}); the kept ${open.fromVersion} container and its directory are removed`,
      open.id,
    );
  });
  ctx.enqueue(keyOf('service', row.name));
  return { ...open, request: what };
}
