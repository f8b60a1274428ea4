// The side effects of the service reconciler, one function per plan step that needs more than one engine
// call: starting or recreating the container, recording failures with backoff, Garage provisioning,
// purging the data dir, and writing status only when it changed (DESIGN.md rule 7).
import { existsSync, rmSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { eq } from 'drizzle-orm';
import type { Result } from '../../controller/types.js';
import type { Credentials, ServiceKind } from '../../catalog/catalog.js';
import { GARAGE_ADMIN_PORT } from '../../catalog/garage.js';
import { nowIso, services, type ServiceRow, type ServiceStatus } from '../../store/schema/index.js';
import { provisionGarage } from './garage-admin.js';
import { READY_POLL_MIN_MS } from './plan.js';
import { redact, restartBackoffMs } from '../restart.js';
import { NetworkGoneError } from '../../runtime/runtime.js';
import { prepareDataDir, serviceSpec } from './container.js';
import { applyDataOwner, dataDirOwner } from './data-owner.js';
import { heldElsewhereRefusal, heldOnNode, markHeldOnNode, prepareOnNode, purgeOnNode, unmarkHeldOnNode } from './node-dir.js';
import type { ServiceReconcilerDeps } from './deps.js';
import { serviceStatusChanged } from './notices.js';

/** The environment variable that sets the image of a service type (`SVC_IMAGE_POSTGRES`, ...). */
export const imageVariable = (type: string) => `SVC_IMAGE_${type.toUpperCase()}`;

export function createActions(deps: ServiceReconcilerDeps) {
  const { db, runtime, settings } = deps;

  /** Writes status (and error, when given) only if either differs from the row. */
  function writeStatus(row: ServiceRow, status: ServiceStatus, error?: string | null) {
    const errorChanged = error !== undefined && error !== row.error;
    if (status === row.status && !errorChanged) return;
    const set: Partial<typeof services.$inferInsert> = { status, updatedAt: nowIso() };
    if (error !== undefined) set.error = error;
    db.transaction(() => {
      db.update(services).set(set).where(eq(services.id, row.id)).run();
      if (status !== row.status) serviceStatusChanged(deps, row, status, error, deps.now());
    });
    row.status = status;
    if (error !== undefined) row.error = error;
  }

  /** Counts a failed or crashed start and schedules the next try after the backoff. */
  function countFailure(row: ServiceRow): number {
    const failures = row.healFailures + 1;
    const afterMs = restartBackoffMs(failures);
    db.update(services)
      .set({ healFailures: failures, healNotBefore: new Date(deps.now() + afterMs).toISOString() })
      .where(eq(services.id, row.id))
      .run();
    return afterMs;
  }

  /** Status `error` with the engine's message (secrets redacted); retried after the backoff. */
  function recordFailure(row: ServiceRow, creds: Credentials, message: string): Result {
    const clean = redact(message, Object.values(creds));
    const afterMs = countFailure(row);
    writeStatus(row, 'error', clean);
    deps.log.warn('service provisioning failed', { service: row.name, error: clean, retry_in_ms: afterMs });
    return { requeueAfterMs: afterMs };
  }

  /** `create` runs a new container (same data dir, same credentials); `start` starts the existing one. */
  async function startContainer(row: ServiceRow, kind: ServiceKind, creds: Credentials, how: 'create' | 'start', counts: boolean): Promise<Result> {
    try {
      if (how === 'create') {
        takeConfiguredImage(row, kind);
        // Its directory on the disk it will run on: this host's, or the labelled node's (through a helper
        // there); the service is then pinned to exactly that node.
        const node = await runtime.newServiceDataNode();
        if (!node) {
          const refusal = heldElsewhereRefusal(row.name, row.activatedAt !== null, heldOnNode(row.dataDir)?.hostname);
          if (refusal) throw new Error(refusal);
        }
        // The image first: the directory is made for the user it runs as (data-owner.ts).
        await runtime.ensureNetwork(settings.network);
        if (!(await runtime.hasImage(row.imageRef))) await pullNamingVariable(row);
        const owner = dataDirOwner(await runtime.imageUser(row.imageRef));
        if (node) {
          await prepareOnNode(runtime, node, settings.dataDir, row, kind, creds, owner);
          markHeldOnNode(row.dataDir, node); // here, the empty directory any service held elsewhere has, naming the node
        } else {
          unmarkHeldOnNode(row.dataDir);
          prepareDataDir(row, kind, creds);
          if (owner) applyDataOwner(row.dataDir, owner);
        }
        const info = await runtime.run({ ...serviceSpec(row, kind, creds, settings), dataNode: node ?? 'here' });
        db.update(services).set({ containerId: info.id }).where(eq(services.id, row.id)).run();
      } else {
        // A container made before svc gave directories to their image's user (it could not enter a root
        // 700 one) gets it at its next start; a directory on another node is given at its create.
        if (!(await runtime.dataNodeOf(row.containerName))) {
          const owner = dataDirOwner(await runtime.imageUser(row.imageRef));
          if (owner && existsSync(row.dataDir)) applyDataOwner(row.dataDir, owner);
        }
        try {
          await runtime.start(row.containerName);
        } catch (err) {
          if (!(err instanceof NetworkGoneError)) throw err;
          // Its network was removed behind svc's back: this container can never start again. Removed (the
          // data directory stays); the next pass creates it from the row, after ensuring the network.
          await runtime.remove(row.containerName);
          deps.log.warn('service network was gone; recreating its container', { service: row.name, network: settings.network });
          writeStatus(row, 'provisioning');
          return { requeueAfterMs: 0 };
        }
      }
    } catch (err) {
      if (!(await runtime.ping())) throw err; // engine down: the work queue backs off; nothing to record
      return recordFailure(row, creds, err instanceof Error ? err.message : String(err));
    }
    if (counts) countFailure(row);
    writeStatus(row, 'provisioning');
    if (counts) deps.log.warn('service container was not running; brought back', { service: row.name, how, attempt: row.healFailures + 1 });
    return { requeueAfterMs: READY_POLL_MIN_MS };
  }

  /**
   * A service that never became active has no data its image must keep reading: it is created from the
   * image configured now, so changing `SVC_IMAGE_<TYPE>` (and restarting) fixes an image that could not be
   * pulled. An active one keeps the image it was created with.
   */
  function takeConfiguredImage(row: ServiceRow, kind: ServiceKind): void {
    if (!deps.images || row.activatedAt !== null || row.status === 'active' || row.status === 'stopped') return;
    const configured = kind.image(deps.images);
    if (configured === row.imageRef) return;
    deps.log.info('service takes the configured image', { service: row.name, from: row.imageRef, to: configured, variable: imageVariable(row.type) });
    db.update(services).set({ imageRef: configured, updatedAt: nowIso() }).where(eq(services.id, row.id)).run();
    row.imageRef = configured;
  }

  /** A pull failure names the variable that chooses the image, the one thing the user can change. */
  async function pullNamingVariable(row: ServiceRow): Promise<void> {
    try {
      await runtime.pull(row.imageRef);
    } catch (err) {
      if (!(await runtime.ping())) throw err;
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        `could not pull image ${row.imageRef} of ${row.type} service ${row.name}: ${why}. ` +
          `${imageVariable(row.type)} sets the image of ${row.type} services: set it to an image this host has or can pull and restart svc; ` +
          `a service that never became active takes it at its next attempt`,
      );
    }
  }

  /** Layout, bucket and key through the admin API; the real key goes into the sealed credentials. */
  async function provision(row: ServiceRow, creds: Credentials): Promise<Result> {
    const info = await runtime.inspect(row.containerName, settings.network);
    try {
      if (!info?.address) throw new Error(`container ${row.containerName} has no address on network ${settings.network}`);
      const key = await provisionGarage(deps.fetch ?? fetch, {
        baseUrl: `http://${info.address}:${GARAGE_ADMIN_PORT}`,
        adminToken: creds.admin_token,
        bucket: creds.bucket,
        keyName: creds.key_name,
      });
      const next = { ...creds, access_key: key.accessKey, secret_key: key.secretKey };
      db.update(services).set({ credentialsSealed: deps.sealer.sealJson(next), updatedAt: nowIso() }).where(eq(services.id, row.id)).run();
      deps.log.info('garage provisioned', { service: row.name, bucket: creds.bucket });
      return { requeueAfterMs: 0 };
    } catch (err) {
      return recordFailure(row, creds, err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * Removes the data dir, refusing anything outside `<dataDir>/services/`: first on the node that holds it
   * (a service made on another node: its note here names it), then here.
   */
  async function purge(row: ServiceRow) {
    const root = resolve(settings.dataDir, 'services') + sep;
    const dir = resolve(row.dataDir);
    if (!dir.startsWith(root)) throw new Error(`refusing to purge ${dir}: not under ${root}`);
    const there = await purgeOnNode(runtime, settings.dataDir, row);
    if (there !== 'none' && 'gone' in there) deps.log.warn('service data left on a node that left the Swarm', { service: row.name, node: there.gone.hostname });
    rmSync(dir, { recursive: true, force: true });
    deps.log.info('service data purged', { service: row.name, ...(there !== 'none' && 'purged' in there ? { node: there.purged.hostname } : {}) });
  }

  /** Records the first time the service was active (once; its image is settled from then on). */
  function noteActivated(row: ServiceRow): void {
    if (row.activatedAt !== null) return;
    row.activatedAt = nowIso();
    db.update(services).set({ activatedAt: row.activatedAt }).where(eq(services.id, row.id)).run();
  }

  return { writeStatus, recordFailure, startContainer, provisionGarage: provision, purge, noteActivated };
}
