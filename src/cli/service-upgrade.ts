// `svc services upgrade NAME VERSION | --revert | --confirm`: the guarded major upgrade of a managed service
// (POST /api/services/{id}/upgrade and .../upgrade/revert|confirm), then its service events printed as the
// reconciler records them, until the upgrade has switched (the old version kept), failed (rolled back), or
// the revert or confirm is done. Exit 1 when it failed.
import { CliError, type Client } from './client.js';

type Write = (text: string) => void;
const stdout: Write = (t) => process.stdout.write(t);

interface UpgradeJson {
  id: number;
  from_version: string;
  to_version: string;
  status: 'running' | 'switched' | 'failed' | 'reverted' | 'confirmed';
  step: string;
  error: string | null;
  keep_days: number;
}
interface EventJson {
  id: number;
  upgrade_id: number | null;
  kind: string;
  message: string;
  created_at: string;
}

export interface ServiceUpgradeOptions {
  name: string;
  version?: string;
  revert?: boolean;
  confirm?: boolean;
  keepDays?: number;
  noWait?: boolean;
  json?: boolean;
  /** Between polls of the upgrade (tests pass 0). */
  pollMs?: number;
  /** How long the CLI follows an upgrade before it stops watching (the upgrade goes on). */
  followMs?: number;
}

/** Whether the upgrade reached what the command waits for. */
const reached = (u: UpgradeJson, what: 'upgrade' | 'revert' | 'confirm') =>
  what === 'upgrade' ? u.status !== 'running' : what === 'revert' ? u.status === 'reverted' : u.status === 'confirmed';

export async function serviceUpgradeCommand(client: Client, o: ServiceUpgradeOptions, write: Write = stdout): Promise<number> {
  const what = o.revert ? 'revert' : o.confirm ? 'confirm' : 'upgrade';
  const service = (await client.json<{ id: number; name: string; version: string }[]>('GET', '/api/services')).find((s) => s.name === o.name);
  if (!service) throw new CliError(`no service named ${o.name}`);
  const started =
    what === 'upgrade'
      ? await client.json<UpgradeJson>('POST', `/api/services/${service.id}/upgrade`, { version: o.version, ...(o.keepDays !== undefined ? { keep_days: o.keepDays } : {}) })
      : await client.json<UpgradeJson>('POST', `/api/services/${service.id}/upgrade/${what}`);
  if (o.json && o.noWait) {
    write(`${JSON.stringify(started, null, 2)}\n`);
    return 0;
  }
  if (!o.json) {
    write(
      what === 'upgrade'
        ? `upgrade ${started.id} of ${o.name} from ${started.from_version} to ${started.to_version} started: backup, new container, move (writes refused, reads served), verify, switch\n`
        : what === 'revert'
          ? `revert of ${o.name} to ${started.from_version} asked for: what was written on ${started.to_version} since the switch is lost\n`
          : `confirm of ${o.name} at ${started.to_version} asked for: the kept ${started.from_version} and its data are removed\n`,
    );
  }
  if (o.noWait) return 0;
  const seen = new Set<number>();
  const end = Date.now() + (o.followMs ?? 2 * 3_600_000);
  for (;;) {
    const events = await client.json<EventJson[]>('GET', `/api/services/${service.id}/events`);
    if (!o.json) {
      for (const e of [...events].reverse()) {
        if (e.upgrade_id !== started.id || seen.has(e.id)) continue;
        seen.add(e.id);
        write(`${e.created_at.slice(11, 19)} ${e.kind.replace(/^upgrade_/, '')}: ${e.message}\n`);
      }
    }
    const u = (await client.json<UpgradeJson[]>('GET', `/api/services/${service.id}/upgrades`)).find((x) => x.id === started.id);
    if (!u) throw new CliError(`upgrade ${started.id} of ${o.name} is gone`);
    if (reached(u, what)) {
      if (o.json) write(`${JSON.stringify(u, null, 2)}\n`);
      else if (u.status === 'switched') write(`${o.name} runs ${u.to_version}; ${u.from_version} is kept ${u.keep_days} days: svc services upgrade ${o.name} --confirm drops it, --revert goes back\n`);
      else if (u.status === 'failed') write(`the upgrade failed and was rolled back; ${o.name} stays at ${u.from_version}: ${u.error ?? 'no reason recorded'}\n`);
      return u.status === 'failed' ? 1 : 0;
    }
    if (Date.now() > end) {
      write(`still at step ${u.step}; svc services --json shows how it goes on (the upgrade goes on without the CLI)\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 1000));
  }
}
