// The side effects of the service reconciler, one function per plan step that needs more than one engine
// call: starting or recreating the container, recording failures with backoff, Garage provisioning,
// purging the data dir, and writing status only when it changed (DESIGN.md rule 7). Every write goes to the
// service's observed state (src/observed/services.ts); the spec row is the services command's alone.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { Result } from '../../controller/types.js';
import { imageFor, versionImageVariable, type Credentials, type ServiceKind } from '../../catalog/catalog.js';
import { GARAGE_ADMIN_PORT } from '../../catalog/garage.js';
import { nowIso, type ServiceStatus } from '../../store/schema/index.js';
import type { ServiceView } from '../../store/service-view.js';
import { observeService } from '../../observed/services.js';
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

  /** Writes status (and error, when given) only if either differs; a new status raises its notice with it. */
  function writeStatus(row: ServiceView, status: ServiceStatus, error?: string | null) {
    observeService(db, row.id, { status, error }, (before, diff) => {
      if (diff.status !== undefined && diff.status !== before.status) serviceStatusChanged(deps, row, status, error, deps.now());
    });
    row.status = status;
    if (error !== undefined) row.error = error;
  }

  /** Counts a failed or crashed start and schedules the next try after the backoff. */
  function countFailure(row: ServiceView): number {
    const failures = row.healFailures + 1;
    const afterMs = restartBackoffMs(failures);
    row.healFailures = failures;
    row.healNotBefore = new Date(deps.now() + afterMs).toISOString();
    observeService(db, row.id, { healFailures: failures, healNotBefore: row.healNotBefore });
    return afterMs;
  }

  /** Status `error` with the engine's message (secrets redacted); retried after the backoff. */
  function recordFailure(row: ServiceView, creds: Credentials, message: string): Result {
    const clean = redact(message, Object.values(creds));
    const afterMs = countFailure(row);
    writeStatus(row, 'error', clean);
    deps.log.warn('service provisioning failed', { service: row.name, error: clean, retry_in_ms: afterMs });
    return { requeueAfterMs: afterMs };
  }

  /** `create` runs a new container (same data dir, same credentials); `start` starts the existing one. */
  async function startContainer(row: ServiceView, kind: ServiceKind, creds: Credentials, how: 'create' | 'start', counts: boolean): Promise<Result> {
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
        observeService(db, row.id, { containerId: info.id, imageRef: row.imageRef });
        row.containerId = info.id;
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
    if (counts) deps.log.warn('service container was not running; brought back', { service: row.name, how, attempt: row.healFailures });
    return { requeueAfterMs: READY_POLL_MIN_MS };
  }

  /**
   * A service that never became active has no data its image must keep reading: it is created from the
   * image configured now, so changing `SVC_IMAGE_<TYPE>` (and restarting) fixes an image that could not be
   * pulled. An active one keeps the image it was created with.
   */
  function takeConfiguredImage(row: ServiceView, kind: ServiceKind): void {
    if (!deps.images || row.activatedAt !== null || row.status === 'active' || row.status === 'stopped') return;
    const configured = imageFor(kind, deps.images, row.version).image;
    if (configured === row.imageRef) return;
    deps.log.info('service takes the configured image', { service: row.name, from: row.imageRef, to: configured, variable: imageVariable(row.type) });
    observeService(db, row.id, { imageRef: configured });
    row.imageRef = configured;
  }

  /**
   * A minor update (issue 33): `SVC_IMAGE_<TYPE>_<MAJOR>` names another image of the version that runs. The
   * container is removed (its data directory stays) and the next pass creates it from the new image: a
   * restart with the data kept. Only a version-specific variable is followed: it says the image is of that
   * version, which a type-wide SVC_IMAGE_<TYPE> does not.
   */
  async function updateImage(row: ServiceView, image: string): Promise<Result> {
    deps.log.info('service takes a newer image of its version', { service: row.name, version: row.version, from: row.imageRef, to: image, variable: versionImageVariable(row.type, row.version) });
    await runtime.stop(row.containerName, 10);
    await runtime.remove(row.containerName);
    observeService(db, row.id, { imageRef: image });
    row.imageRef = image;
    writeStatus(row, 'provisioning');
    return { requeueAfterMs: 0 };
  }

  /** A pull failure names the variable that chooses the image, the one thing the user can change. */
  async function pullNamingVariable(row: ServiceView): Promise<void> {
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

  /** Layout, bucket and the credentials' key through the admin API; recorded as done once it succeeds. */
  async function provision(row: ServiceView, creds: Credentials): Promise<Result> {
    const info = await runtime.inspect(row.containerName, settings.network);
    try {
      if (!info?.address) throw new Error(`container ${row.containerName} has no address on network ${settings.network}`);
      await provisionGarage(deps.fetch ?? fetch, {
        baseUrl: `http://${info.address}:${GARAGE_ADMIN_PORT}`,
        adminToken: creds.admin_token,
        bucket: creds.bucket,
        keyName: creds.key_name,
        accessKey: creds.access_key,
        secretKey: creds.secret_key,
      });
      row.provisionedAt = nowIso();
      observeService(db, row.id, { provisionedAt: row.provisionedAt });
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
  async function purge(row: ServiceView) {
    const root = resolve(settings.dataDir, 'services') + sep;
    const dir = resolve(row.dataDir);
    if (!dir.startsWith(root)) throw new Error(`refusing to purge ${dir}: not under ${root}`);
    const there = await purgeOnNode(runtime, settings.dataDir, row);
    if (there !== 'none' && 'gone' in there) deps.log.warn('service data left on a node that left the Swarm', { service: row.name, node: there.gone.hostname });
    rmSync(dir, { recursive: true, force: true });
    // The directories its upgrades made beside its own (`<name>.v17`; a name holds no `.`, so no other service's).
    const spec = resolve(row.specDataDir);
    if (spec.startsWith(root)) {
      rmSync(spec, { recursive: true, force: true });
      const parent = dirname(spec);
      for (const e of existsSync(parent) ? readdirSync(parent) : []) if (e.startsWith(`${basename(spec)}.v`)) rmSync(join(parent, e), { recursive: true, force: true });
    }
    deps.log.info('service data purged', { service: row.name, ...(there !== 'none' && 'purged' in there ? { node: there.purged.hostname } : {}) });
  }

  /** Records the first time the service was active (once; its image is settled from then on). */
  function noteActivated(row: ServiceView): void {
    if (row.activatedAt !== null) return;
    row.activatedAt = nowIso();
    observeService(db, row.id, { activatedAt: row.activatedAt });
  }

  /** Forgets the backoff of earlier failures (a start the user asked for, a service healthy again). */
  function resetHeal(row: ServiceView, startSeenAt?: string | null): void {
    observeService(db, row.id, { healFailures: 0, healNotBefore: null, startSeenAt });
    row.healFailures = 0;
    row.healNotBefore = null;
    if (startSeenAt !== undefined) row.startSeenAt = startSeenAt;
  }

  return { writeStatus, resetHeal, recordFailure, startContainer, provisionGarage: provision, purge, noteActivated, updateImage };
}
