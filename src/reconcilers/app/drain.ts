// The drain of an old version after its switch (issue 37): the switch sends new requests to the new version
// at once, and the deploy is a success then; the old version keeps every connection it had open (requests
// in flight, upgraded WebSockets, event streams) until they end or the app's `drain_seconds` pass, and only
// then gets SIGTERM and its grace period. The state is the deploy row's `drain_from`/`drain_until`, so a
// restarted daemon resumes the drain; each pass polls once and requeues (decisions in plan.ts judgeDrain).
// A newer deploy or a flip-back never waits for it: any number of old versions may drain at once.
import type { Result } from '../../controller/types.js';
import { LABELS } from '../../runtime/runtime.js';
import { getAppByName } from '../../store/apps.js';
import { addDeployEvent, drainingDeploys, updateDeploy, watchedDeploy } from '../../store/deploys.js';
import type { DeployRow } from '../../store/schema/index.js';
import type { AppView } from '../../store/app-view.js';
import type { AppReconcilerDeps } from './deps.js';
import { judgeDrain } from './plan.js';
import { graceOf } from './container-spec.js';

/** Consecutive polls that saw nothing open on a draining old version, per deploy; lost on restart (it polls again). */
export type DrainMemory = Map<number, number>;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The old version's containers (slot 0 and its `-r<slot>` replicas) and the connections the proxy has open
 * to them. Counted by address, whatever the port: the old version may listen on another port than the new.
 */
async function openOn(deps: AppReconcilerDeps, app: Pick<AppView, 'name'>, old: string): Promise<{ names: string[]; open: number }> {
  const list = await deps.runtime.list({ [LABELS.managed]: 'true', [LABELS.instance]: deps.settings.instance, [LABELS.app]: app.name });
  const names = [old, ...list.filter((c) => c.name.startsWith(`${old}-r`)).map((c) => c.name)];
  const hosts = new Set<string>();
  for (const name of names) {
    const info = await deps.runtime.inspect(name, deps.settings.network);
    if (info?.running && info.address) hosts.add(info.address);
  }
  if (hosts.size === 0) return { names, open: 0 };
  try {
    let open = 0;
    for (const [upstream, n] of await deps.proxy.upstreamRequests()) if (hosts.has(hostOf(upstream))) open += n;
    return { names, open };
  } catch {
    return { names, open: 0 }; // no proxy answer: nothing to wait on; the minimum wait still applies
  }
}

/** `10.0.0.5:3000` -> `10.0.0.5`, `[fd00::5]:3000` -> `fd00::5`. */
const hostOf = (upstream: string) => upstream.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

/** At the switch: the old version starts draining; records what it has open now. */
export async function startDrain(deps: AppReconcilerDeps, app: AppView, deploy: DeployRow): Promise<void> {
  const old = deploy.previousContainer!;
  const { open } = await openOn(deps, app, old);
  const now = deps.now();
  updateDeploy(deps.db, deps.bus, deploy.id, { drainFrom: iso(now), drainUntil: iso(now + app.drainSeconds * 1000), drainOpen: open });
  addDeployEvent(deps.db, deps.bus, deploy.id, 'stop_old', `old container ${old} drains: ${plural(open, 'connection')} open at the switch; stopped when they end, at most ${app.drainSeconds} s (drain_seconds)`);
}

/**
 * One poll of every old version of the app that still drains; stops the ones whose connections ended or
 * whose drain_seconds passed. Returns when to poll again (nothing: no drain left).
 */
export async function drainStep(deps: AppReconcilerDeps, memory: DrainMemory, appName: string): Promise<Result> {
  const app = getAppByName(deps.db, appName);
  if (!app) return {};
  let next = Infinity;
  for (const d of drainingDeploys(deps.db, app.id)) {
    const after = await drainOne(deps, memory, app, d);
    if (after !== undefined) next = Math.min(next, after);
  }
  return next === Infinity ? {} : { requeueAfterMs: next };
}

async function drainOne(deps: AppReconcilerDeps, memory: DrainMemory, app: AppView, d: DeployRow): Promise<number | undefined> {
  const old = d.previousContainer;
  const watched = watchedDeploy(deps.db, app.id);
  if (!old || old === app.liveContainerName) {
    // A flip-back made it live again: its connections simply stay.
    memory.delete(d.id);
    updateDeploy(deps.db, deps.bus, d.id, { drainFrom: null, drainUntil: null });
    if (old) addDeployEvent(deps.db, deps.bus, d.id, 'stop_old', `old container ${old} serves again (flip-back): its drain ends and its connections stay`);
    return undefined;
  }
  // A flip-back to it is under way (it is being probed): the flip-back decides, not the drain.
  if (watched && watched.previousContainer === old && (watched.step === 'flip_back' || watched.step === 'flip_stop')) return 250;
  const fromMs = Date.parse(d.drainFrom!);
  const capMs = Date.parse(d.drainUntil!) - fromMs;
  const { names, open } = await openOn(deps, app, old);
  const polls = open === 0 ? (memory.get(d.id) ?? 0) + 1 : 0;
  memory.set(d.id, polls);
  const sinceCutMs = deps.now() - fromMs;
  const verdict = judgeDrain({ sinceCutMs, dnsRefreshMs: deps.settings.dnsRefreshMs, capMs, inFlight: open, zeroPolls: polls - 1 });
  if (verdict.kind === 'wait') return verdict.afterMs;
  memory.delete(d.id);

  // An adopted container is not ours to remove: only stopped. Inside its deploy's watch window the old
  // container is kept, stopped, to flip back to (watch.ts); its other replicas never are (scaling adds them).
  const adopted = app.appType === 'adopted_container' && old === app.source;
  const kept = !adopted && watched?.id === d.id && watched.step === 'watch';
  const [first, ...extras] = names;
  // All at once: each stop waits for its container's exit (SIGTERM, up to the grace period).
  const failed = (
    await Promise.allSettled([
      ...extras.map(async (extra) => {
        await deps.runtime.stop(extra, graceOf(deps, app));
        await deps.runtime.remove(extra);
      }),
      (async () => {
        await deps.runtime.stop(first!, graceOf(deps, app), { adopted });
        if (!adopted && !kept) await deps.runtime.remove(first!);
      })(),
    ])
  ).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  updateDeploy(deps.db, deps.bus, d.id, { drainFrom: null, drainUntil: null });
  const what = adopted ? 'stopped (kept, not removed)' : kept ? `stopped and kept for the ${deps.settings.watchMs / 1000} s watch window` : 'stopped and removed';
  const ended = sinceCutMs >= capMs ? `drain_seconds (${Math.round(capMs / 1000)} s) passed` : `its connections ended after ${(sinceCutMs / 1000).toFixed(1)} s`;
  addDeployEvent(
    deps.db,
    deps.bus,
    d.id,
    'stop_old',
    `old container ${old} ${what}: ${ended}; ${plural(d.drainOpen ?? 0, 'connection')} open at the switch, ${open} still open when it stopped`,
    open > 0 ? 'warn' : 'info',
  );
  return undefined;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
