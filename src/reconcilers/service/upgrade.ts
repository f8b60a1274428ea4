// The effectful half of a guarded major upgrade (issue 33): one step per pass, as upgrade-plan.ts says,
// each recorded on the upgrade row with its service event before the pass returns. The old container
// serves until the switch (with writes refused from the freeze on); any failure before the switch removes
// the new container and its directory and gives writes back to the old one, so there are never two
// half-databases: the new side is either being built, or verified equal and switched to.
import { mkdirSync, rmSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type { Credentials, ServiceKind, UpgradeOps } from '../../catalog/catalog.js';
import type { Result } from '../../controller/types.js';
import { observeService } from '../../observed/services.js';
import { activeDeploy, createDeploy, getDeploy } from '../../store/deploys.js';
import { getApp } from '../../store/apps.js';
import type { ServiceUpgradeRow, UpgradeStep } from '../../store/schema/index.js';
import { addServiceEvent, advanceUpgrade, countUpgradeEvents, updateUpgrade } from '../../store/service-upgrades.js';
import { linkedAppNames } from '../../store/services.js';
import type { ServiceView } from '../../store/service-view.js';
import { nowIso } from '../../store/schema/index.js';
import { redact } from '../restart.js';
import { newServiceBackup, serviceBackupPath, takeServiceBackup } from '../service-backup/take.js';
import { serviceSpec } from './container.js';
import { applyDataOwner, dataDirOwner } from './data-owner.js';
import type { ServiceReconcilerDeps } from './deps.js';
import { checkReady } from './readiness.js';
import { BEFORE_SWITCH, planUpgrade, UPGRADE_POLL_MS, type UpgradeFacts } from './upgrade-plan.js';
import { httpProbe } from '../app/probe.js';

/** The label that marks the new container of an upgrade (and keeps it from being taken for an orphan). */
export const UPGRADE_LABEL = 'svc.upgrade';


/** A table (or database) whose counts or checksums differ between the two sides. */
export interface SideBySide {
  databases: number;
  tables: number;
  differences: { table: string; old: string; new: string }[];
}

export function createUpgradeRunner(deps: ServiceReconcilerDeps) {
  const { db, runtime, settings } = deps;
  const httpGet = deps.httpGet ?? httpProbe;

  const event = (u: ServiceUpgradeRow, kind: string, message: string) => addServiceEvent(db, u.serviceId, kind, message, u.id);

  /** Only directories under `<dataDir>/services/` are ever removed. */
  function removeDir(dir: string) {
    const root = resolve(settings.dataDir, 'services') + sep;
    if (!resolve(dir).startsWith(root)) throw new Error(`refusing to remove ${dir}: not under ${root}`);
    rmSync(dir, { recursive: true, force: true });
  }

  async function exec(container: string, c: { cmd: string[]; env?: Record<string, string> }, what: string, creds: Credentials) {
    const res = await runtime.exec(container, c.cmd, c.env ? { env: c.env } : undefined);
    if (res.exitCode !== 0) throw new Error(`${what} failed (exit ${res.exitCode}): ${redact(res.stderr.trim().split('\n').slice(-3).join(' '), Object.values(creds))}`);
    return res;
  }

  async function facts(row: ServiceView, u: ServiceUpgradeRow, kind: ServiceKind, creds: Credentials): Promise<UpgradeFacts> {
    const [oldC, newC] = await Promise.all([runtime.inspect(u.fromContainer, settings.network), runtime.inspect(u.toContainer, settings.network)]);
    let newReady: boolean | undefined;
    if (u.step === 'wait_ready' && newC?.running) newReady = await checkReady(runtime, httpGet, u.toContainer, settings.network, kind.readiness(creds), deps.tcpOpen);
    const appDeploysOpen = linkedAppNames(db, row.id).filter((a) => activeDeploy(db, a.id) !== undefined).length;
    return {
      oldRunning: oldC?.running ?? false,
      newExists: newC !== undefined,
      newRunning: newC?.running ?? false,
      newReady,
      appDeploysOpen,
      moveRestarts: countUpgradeEvents(db, u.id, 'upgrade_move_restarted'),
      nowMs: deps.now(),
      stepSinceMs: Date.parse(u.updatedAt),
    };
  }

  /** Redeploys every linked app that runs a deploy (its live image, trigger `roll`) onto the service as it is now. */
  function redeployApps(row: ServiceView, u: ServiceUpgradeRow, why: string): number[] {
    const ids: number[] = [];
    for (const a of linkedAppNames(db, row.id)) {
      const app = getApp(db, a.id);
      const image = app?.currentDeployId ? getDeploy(db, app.currentDeployId)?.imageRef : undefined;
      if (!app || !image) continue;
      ids.push(createDeploy(db, deps.enqueue ?? (() => {}), deps.bus, { appId: app.id, appName: app.name, imageRef: image, trigger: 'roll', origin: 'api' }).id);
    }
    event(u, 'upgrade_apps_redeployed', ids.length ? `${why}: deploys ${ids.map((i) => `#${i}`).join(', ')} of the linked apps` : `${why}: no linked app runs a deploy`);
    return ids;
  }

  async function sums(container: string, ops: UpgradeOps, creds: Credentials): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const dbs = (await exec(container, ops.databases(creds), 'listing the databases', creds)).stdout.split('\n').filter(Boolean);
    for (const name of dbs) {
      out.set(`${name} (database)`, 'present');
      const lines = (await exec(container, ops.tableSums(creds, name), `the checksums of ${name}`, creds)).stdout.split('\n').filter(Boolean);
      for (const line of lines) {
        const [table, ...rest] = line.split(' ');
        out.set(`${name}.${table}`, rest.join(' '));
      }
    }
    return out;
  }

  /** Both sides' per-table counts and checksums, compared. */
  async function compare(u: ServiceUpgradeRow, ops: UpgradeOps, creds: Credentials): Promise<SideBySide> {
    const [a, b] = await Promise.all([sums(u.fromContainer, ops, creds), sums(u.toContainer, ops, creds)]);
    const differences: SideBySide['differences'] = [];
    for (const key of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(key) !== b.get(key)) differences.push({ table: key, old: a.get(key) ?? 'missing', new: b.get(key) ?? 'missing' });
    }
    const databases = [...a.keys()].filter((k) => k.endsWith(' (database)')).length;
    return { databases, tables: a.size - databases, differences };
  }

  /** Does one step; returns when to look again. A throw before the switch rolls the upgrade back. */
  async function runStep(row: ServiceView, u: ServiceUpgradeRow, kind: ServiceKind, creds: Credentials, step: UpgradeStep): Promise<Result> {
    const ops = kind.upgrade!;
    switch (step) {
      case 'backup': {
        // Step 1 is a service backup like any other (listed, kept while the upgrade is open, copied off-site).
        if (await runtime.dataNodeOf(u.fromContainer)) throw new Error('the service keeps its data on another Swarm node; upgrades run on the manager only for now');
        const b = await takeServiceBackup({ db, runtime, sealer: deps.sealer, log: deps.log, dataDir: settings.dataDir, enqueue: deps.enqueue }, newServiceBackup(db, row, 'upgrade', u.id)).catch((err: unknown) => {
          throw new Error(`the backup before the upgrade failed: ${err instanceof Error ? err.message : String(err)}`);
        });
        const file = serviceBackupPath(settings.dataDir, b);
        advanceUpgrade(db, u, 'create', { kind: 'upgrade_backup', message: `backup ${b.id} of ${row.name} at ${u.fromVersion} written to ${file}` }, { backupPath: file });
        return { requeueAfterMs: 0 };
      }
      case 'create': {
        if (await runtime.inspect(u.toContainer)) await runtime.remove(u.toContainer);
        removeDir(u.toDataDir);
        mkdirSync(u.toDataDir, { recursive: true, mode: 0o700 });
        if (!(await runtime.hasImage(u.toImage))) await runtime.pull(u.toImage);
        const owner = dataDirOwner(await runtime.imageUser(u.toImage));
        if (owner) applyDataOwner(u.toDataDir, owner);
        const next = { ...row, containerName: u.toContainer, dataDir: u.toDataDir, imageRef: u.toImage, version: u.toVersion };
        const spec = serviceSpec(next, kind, creds, settings);
        await runtime.run({ ...spec, labels: { ...spec.labels, [UPGRADE_LABEL]: String(u.id) }, dataNode: 'here' });
        advanceUpgrade(db, u, 'wait_ready', { kind: 'upgrade_created', message: `new container ${u.toContainer} (${u.toImage}) started empty on ${u.toDataDir}` });
        return { requeueAfterMs: UPGRADE_POLL_MS };
      }
      case 'wait_ready':
        advanceUpgrade(db, u, 'freeze', { kind: 'upgrade_new_ready', message: `${u.toContainer} is ready` });
        return { requeueAfterMs: 0 };
      case 'freeze':
        await exec(u.fromContainer, ops.freeze(creds), 'refusing writes on the old container', creds);
        advanceUpgrade(db, u, 'move', { kind: 'upgrade_writes_refused', message: `writes to ${u.fromContainer} are refused until the switch (reads are served); the apps' open sessions were ended` });
        return { requeueAfterMs: 0 };
      case 'move': {
        const t0 = deps.now();
        const res = await runtime.exec(u.toContainer, ops.move(creds, u.fromContainer).cmd, { env: ops.move(creds, u.fromContainer).env });
        const expected = ops.expectedLoadErrors(creds);
        const errors = res.stderr.split('\n').filter((l) => /ERROR|svc: .* failed/.test(l) && !expected.some((e) => e.test(l)));
        if (res.exitCode !== 0 || errors.length > 0) {
          throw new Error(`the move failed (exit ${res.exitCode}): ${redact((errors.length ? errors : res.stderr.trim().split('\n')).slice(-3).join(' '), Object.values(creds))}`);
        }
        await exec(u.toContainer, ops.unfreeze(creds), 'taking writes on the new container', creds);
        advanceUpgrade(db, u, 'verify', { kind: 'upgrade_moved', message: `data dumped from ${u.fromVersion} and loaded into ${u.toVersion} in ${((deps.now() - t0) / 1000).toFixed(1)} s` });
        return { requeueAfterMs: 0 };
      }
      case 'verify': {
        const cmp = await compare(u, ops, creds);
        updateUpgrade(db, u.id, { verification: JSON.stringify(cmp) });
        if (cmp.differences.length > 0) {
          const shown = cmp.differences.slice(0, 5).map((d) => `${d.table}: ${d.old} on ${u.fromVersion}, ${d.new} on ${u.toVersion}`).join('; ');
          throw new Error(`verification found ${cmp.differences.length} difference(s): ${shown}`);
        }
        advanceUpgrade(db, u, 'switch', { kind: 'upgrade_verified', message: `${cmp.tables} tables in ${cmp.databases} databases have equal row counts and checksums on both sides` });
        return { requeueAfterMs: 0 };
      }
      case 'switch': {
        db.transaction(() => {
          observeService(db, row.id, { liveVersion: u.toVersion, liveContainer: u.toContainer, liveDataDir: u.toDataDir, imageRef: u.toImage });
          updateUpgrade(db, u.id, { status: 'switched', step: 'drain', attempts: 0, switchedAt: nowIso() });
          event(u, 'upgrade_switched', `${row.name} is served by ${u.toContainer} at ${u.toVersion}`);
          redeployApps({ ...row, containerName: u.toContainer }, u, 'onto the new version');
        });
        return { requeueAfterMs: UPGRADE_POLL_MS };
      }
      case 'drain': {
        await runtime.stop(u.fromContainer, 10);
        const until = new Date(Date.parse(u.switchedAt!) + u.keepDays * 86_400_000).toISOString();
        advanceUpgrade(db, u, 'kept', { kind: 'upgrade_old_kept', message: `the apps run on ${u.toVersion}; ${u.fromContainer} stopped and kept with ${u.fromDataDir} until ${until} (revert or confirm before)` });
        return { requeueAfterMs: 0 };
      }
      case 'revert': {
        const old = await runtime.inspect(u.fromContainer, settings.network);
        if (!old) throw new Error(`the kept container ${u.fromContainer} is gone; the upgrade cannot be reverted`);
        if (!old.running) {
          await runtime.start(u.fromContainer);
          return { requeueAfterMs: UPGRADE_POLL_MS };
        }
        if (!(await checkReady(runtime, httpGet, u.fromContainer, settings.network, kind.readiness(creds), deps.tcpOpen))) return { requeueAfterMs: UPGRADE_POLL_MS };
        await exec(u.fromContainer, ops.unfreeze(creds), 'taking writes on the old container', creds);
        db.transaction(() => {
          const back = <T>(v: T, spec: T) => (v === spec ? null : v);
          observeService(db, row.id, {
            liveVersion: back(u.fromVersion, row.specVersion),
            liveContainer: back(u.fromContainer, row.specContainerName),
            liveDataDir: back(u.fromDataDir, row.specDataDir),
            imageRef: u.fromImage,
          });
          updateUpgrade(db, u.id, { step: 'revert_drain', attempts: 0 });
          event(u, 'upgrade_reverted', `${row.name} is served by ${u.fromContainer} at ${u.fromVersion} again; what was written on ${u.toVersion} since the switch is dropped with it`);
          redeployApps({ ...row, containerName: u.fromContainer }, u, 'back onto the old version');
        });
        return { requeueAfterMs: UPGRADE_POLL_MS };
      }
      case 'revert_drain':
        if (await runtime.inspect(u.toContainer)) await runtime.remove(u.toContainer);
        removeDir(u.toDataDir);
        finish(u, 'reverted', 'upgrade_revert_done', `${u.toContainer} and ${u.toDataDir} removed`);
        return {};
      case 'confirm':
        if (await runtime.inspect(u.fromContainer)) await runtime.remove(u.fromContainer);
        removeDir(u.fromDataDir);
        finish(u, 'confirmed', 'upgrade_confirmed', `${u.fromVersion}'s container ${u.fromContainer} and ${u.fromDataDir} removed; ${row.name} stays at ${u.toVersion}`);
        return {};
      case 'rollback':
        return rollback(row, u, kind, creds);
      default:
        return {};
    }
  }

  function finish(u: ServiceUpgradeRow, status: ServiceUpgradeRow['status'], kind: string, message: string) {
    db.transaction(() => {
      updateUpgrade(db, u.id, { status, step: 'done', attempts: 0, request: null, finishedAt: nowIso() });
      event(u, kind, message);
    });
  }

  /** Removes the new side and gives writes back to the old one; the upgrade ends `failed`. */
  async function rollback(row: ServiceView, u: ServiceUpgradeRow, kind: ServiceKind, creds: Credentials): Promise<Result> {
    if (await runtime.inspect(u.toContainer)) await runtime.remove(u.toContainer);
    removeDir(u.toDataDir);
    const old = await runtime.inspect(u.fromContainer, settings.network);
    if (old?.running) {
      try {
        await exec(u.fromContainer, kind.upgrade!.unfreeze(creds), 'taking writes again', creds);
      } catch (err) {
        event(u, 'upgrade_rollback_retry', `giving writes back failed (${err instanceof Error ? err.message : String(err)}); the next pass tries again`);
        return { requeueAfterMs: 1_000 };
      }
    }
    finish(u, 'failed', 'upgrade_rolled_back', `${u.toContainer} and ${u.toDataDir} removed; ${row.name} stays at ${u.fromVersion} on ${u.fromContainer}, which takes writes again`);
    return { requeueAfterMs: 0 };
  }

  /**
   * One pass of the open upgrade `u`. Returns undefined when the upgrade only waits in `kept` (the service's
   * own plan then runs for the new container, which serves), else the pass's result.
   */
  async function advance(row: ServiceView, u: ServiceUpgradeRow, kind: ServiceKind, creds: Credentials): Promise<Result | { keptFor: number }> {
    const f = await facts(row, u, kind, creds);
    const plan = planUpgrade(u, f);
    switch (plan.kind) {
      case 'wait':
        return u.step === 'kept' ? { keptFor: plan.afterMs } : { requeueAfterMs: plan.afterMs };
      case 'fail':
        advanceUpgrade(db, u, 'rollback', { kind: 'upgrade_failed', message: `upgrade to ${u.toVersion} failed: ${plan.reason}; rolling back` }, { error: plan.reason });
        return { requeueAfterMs: 0 };
      case 'restart-move':
        event(u, 'upgrade_move_restarted', 'a pass began the move and never finished (the daemon stopped): the new side is made again, empty');
        advanceUpgrade(db, u, 'create', { kind: 'upgrade_step', message: 'back to create' });
        return { requeueAfterMs: 0 };
      case 'run': {
        updateUpgrade(db, u.id, { attempts: u.attempts + 1 });
        const current = { ...u, attempts: u.attempts + 1 };
        try {
          return await runStep(row, current, kind, creds, plan.step);
        } catch (err) {
          if (!(await runtime.ping())) throw err; // engine down: backoff, the step is begun again
          const why = redact(err instanceof Error ? err.message : String(err), Object.values(creds));
          if (BEFORE_SWITCH.includes(plan.step)) {
            advanceUpgrade(db, u, 'rollback', { kind: 'upgrade_failed', message: `upgrade to ${u.toVersion} failed at ${plan.step}: ${why}; rolling back` }, { error: why });
            return { requeueAfterMs: 0 };
          }
          event(u, 'upgrade_step_error', `${plan.step}: ${why}`);
          updateUpgrade(db, u.id, { error: why });
          throw err;
        }
      }
    }
  }

  return { advance };
}
