// A preview's service made as a copy of its parent's (issue 33 section 4, `previews.services: copy`): once
// the new service is ready and before it is marked active, the parent's data is dumped in the parent's
// container (copyDump: no credentials, so the copy keeps its own), written into the copy's own data
// directory (never a file of the parent's), loaded there by the engine and the file removed. A dump over the
// copy's size limit, a parent that is not active, or a failed load leaves the preview an empty service and
// says why in a service event; the preview works either way. A copy begun by a daemon that died is not
// loaded twice over half its data: it is marked failed.
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dataPathOf, type Credentials, type ServiceKind } from '../../catalog/catalog.js';
import { activeDeploy, createDeploy, getDeploy } from '../../store/deploys.js';
import { getApp } from '../../store/apps.js';
import { addServiceEvent } from '../../store/service-upgrades.js';
import { updateCopy } from '../../store/service-copies.js';
import { getService, linkedAppNames, openCredentials } from '../../store/services.js';
import type { ServiceCopyRow } from '../../store/schema/index.js';
import type { ServiceView } from '../../store/service-view.js';
import { redact } from '../restart.js';
import type { ServiceReconcilerDeps } from './deps.js';

/** The dump's name inside the copy's data directory while it is loaded. */
export const COPY_FILE = '.svc-copy.sql';

export function createCopyRunner(deps: ServiceReconcilerDeps) {
  const { db, runtime } = deps;

  /** Makes the copy (or records why not); the caller marks the service active afterwards either way. */
  async function run(row: ServiceView, kind: ServiceKind, creds: Credentials, copy: ServiceCopyRow): Promise<void> {
    const say = (kindOfEvent: string, message: string) => addServiceEvent(db, row.id, kindOfEvent, message);
    const fail = (why: string) => {
      updateCopy(db, copy.id, { status: 'failed', error: why });
      say('copy_failed', `no copy of the parent's data: ${why}; the preview runs on an empty ${row.type}`);
    };
    if (copy.status === 'copying') return fail('a copy was begun and the daemon stopped before it ended; the service may hold part of the data');
    const source = copy.sourceId === null ? undefined : getService(db, copy.sourceId);
    if (!source || source.deletedAt || source.status !== 'active') return fail(`the parent's service ${source?.name ?? '(deleted)'} is not active`);
    if (!kind.copyFrom && (!kind.copyDump || !kind.loadDump)) return fail(`${row.type} services are not copied yet`);
    updateCopy(db, copy.id, { status: 'copying' });
    if (kind.copyFrom) return copyDirect(row, kind, creds, copy, source, fail);
    const file = join(row.dataDir, COPY_FILE);
    const sourceCreds = openCredentials(deps.sealer, source);
    const secrets = [...Object.values(sourceCreds), ...Object.values(creds)];
    const t0 = deps.now();
    try {
      const dump = kind.copyDump!(sourceCreds);
      const res = await runtime.execToFile(source.containerName, dump.cmd, file, { env: dump.env });
      if (res.exitCode !== 0) return fail(`the dump of ${source.name} failed (exit ${res.exitCode}): ${redact(res.stderr.trim().split('\n').slice(-2).join(' '), secrets)}`);
      const bytes = statSync(file).size;
      if (bytes > copy.maxBytes) return fail(`the dump of ${source.name} is ${mb(bytes)} MB, over the copy limit of ${mb(copy.maxBytes)} MB`);
      const load = kind.loadDump!(creds, `${dataPathOf(kind, row.version)}/${COPY_FILE}`);
      const loaded = await runtime.exec(row.containerName, load.cmd, { env: load.env });
      if (loaded.exitCode !== 0) return fail(`loading the dump failed (exit ${loaded.exitCode}): ${redact(loaded.stderr.trim().split('\n').slice(-2).join(' '), secrets)}`);
      updateCopy(db, copy.id, { status: 'done', bytes });
      say('copy_done', `copy of ${source.name}'s data loaded (${mb(bytes)} MB dump, ${((deps.now() - t0) / 1000).toFixed(1)} s); no file is shared with ${source.name}'s data directory`);
      redeployLinked(row);
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** The type copies itself from the parent (redis: a replication), in the copy's container. */
  async function copyDirect(row: ServiceView, kind: ServiceKind, creds: Credentials, copy: ServiceCopyRow, source: ServiceView, fail: (why: string) => void) {
    const sourceCreds = openCredentials(deps.sealer, source);
    const secrets = [...Object.values(sourceCreds), ...Object.values(creds)];
    const t0 = deps.now();
    const c = kind.copyFrom!(creds, sourceCreds, source.containerName, copy.maxBytes);
    const res = await runtime.exec(row.containerName, c.cmd, { env: c.env });
    const why = redact(res.stderr.trim().split('\n').slice(-2).join(' '), secrets).replace(/^svc: /, '');
    if (res.exitCode !== 0) return fail(res.exitCode === 3 ? why : `the copy from ${source.name} failed (exit ${res.exitCode}): ${why}`);
    const bytes = Number(res.stdout.trim().split('\n').pop()) || 0;
    updateCopy(db, copy.id, { status: 'done', bytes });
    addServiceEvent(db, row.id, 'copy_done', `copy of ${source.name}'s data made (${mb(bytes)} MB, ${((deps.now() - t0) / 1000).toFixed(1)} s); no file is shared with ${source.name}'s data directory`);
    redeployLinked(row);
  }

  /** A preview app that already runs saw the empty service: it is redeployed onto the copied data. */
  function redeployLinked(row: ServiceView) {
    for (const a of linkedAppNames(db, row.id)) {
      const app = getApp(db, a.id);
      const image = app?.currentDeployId ? getDeploy(db, app.currentDeployId)?.imageRef : undefined;
      if (!app || !image || activeDeploy(db, app.id)) continue;
      const d = createDeploy(db, deps.enqueue ?? (() => {}), deps.bus, { appId: app.id, appName: app.name, imageRef: image, trigger: 'roll', origin: 'api' });
      addServiceEvent(db, row.id, 'copy_app_redeployed', `deploy #${d.id} of ${app.name}, which started before the copy was loaded`);
    }
  }

  return { run };
}

const mb = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);
