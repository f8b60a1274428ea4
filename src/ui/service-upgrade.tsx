/** @jsxImportSource hono/jsx */
// The "Version" section of `/services/{id}` (issue 33 section 2): the versions a service can be upgraded to,
// with the plan said before the button; an upgrade under way as its steps and events (the page refreshes);
// a switched one with "Revert" (what was written since is lost, said and ticked) and "Confirm". The forms
// post to the routes in service-pages.tsx, which call the same command as the REST API.
import type { FC } from 'hono/jsx';
import { versionsOf } from '../catalog/catalog.js';
import { isLaterVersion } from '../catalog/types.js';
import type { ServiceEventRow, ServiceUpgradeRow } from '../store/schema/index.js';
import type { ServiceView } from '../store/service-view.js';
import { Check, Csrf, Field, Select, Time } from './layout.js';

/** The steps an upgrade goes through, in order, as a user reads them. */
export const UPGRADE_STEPS: readonly [step: string, label: string][] = [
  ['backup', 'Backup of the service'],
  ['create', 'New container, empty'],
  ['wait_ready', 'New container ready'],
  ['freeze', 'Writes refused on the old one'],
  ['move', 'Data moved'],
  ['verify', 'Verified table by table'],
  ['switch', 'Apps switched'],
  ['drain', 'Old one stopped'],
  ['kept', 'Old one kept for a revert'],
];

export const upgradePlan = (s: Pick<ServiceView, 'name' | 'version'>, to: string) =>
  `A backup of ${s.name} is taken first. A new ${to} container starts beside the ${s.version} one, the data is moved across while the apps keep reading (their writes are refused for the move: a short maintenance window), and every table's rows and checksum are compared. Any difference stops the upgrade and ${s.version} goes on serving. Then the linked apps are redeployed onto ${to}, and ${s.version} is kept stopped for a revert.`;

export const ServiceUpgradeSection: FC<{
  s: ServiceView;
  upgrade: ServiceUpgradeRow | undefined;
  last: ServiceUpgradeRow | undefined;
  events: ServiceEventRow[];
  csrf: string;
  mayUpgrade: boolean;
}> = ({ s, upgrade, last, events, csrf, mayUpgrade }) => {
  const later = versionsOf(s.type).filter((v) => isLaterVersion(s.type, s.version, v));
  const shown = upgrade ?? last;
  const own = shown ? events.filter((e) => e.upgradeId === shown.id).slice(0, 12) : [];
  const at = shown ? UPGRADE_STEPS.findIndex(([step]) => step === shown.step) : -1;
  return (
    <section id="service-upgrade" aria-labelledby="h-upgrade">
      <h2 id="h-upgrade">Version</h2>
      {upgrade ? (
        <>
          <p>
            {upgrade.status === 'running'
              ? `Upgrading from ${upgrade.fromVersion} to ${upgrade.toVersion}: ${UPGRADE_STEPS[at]?.[1] ?? upgrade.step}.`
              : `Upgraded from ${upgrade.fromVersion} to ${upgrade.toVersion}. ${upgrade.fromVersion} is kept stopped with its data until ${new Date(Date.parse(upgrade.switchedAt ?? upgrade.updatedAt) + upgrade.keepDays * 86_400_000).toISOString().slice(0, 10)}.`}
            {upgrade.request && ` A ${upgrade.request} is under way.`}
          </p>
          <ol class="steps" aria-label="Upgrade steps">
            {UPGRADE_STEPS.map(([step, label], i) => (
              <li data-step={step} aria-current={i === at ? 'step' : undefined} class={i < at || upgrade.step === 'done' ? 'done' : i === at ? 'current' : 'todo'}>
                {label}
              </li>
            ))}
          </ol>
          {upgrade.status === 'switched' && !upgrade.request && mayUpgrade && (
            <div class="actions spaced">
              <form method="post" action={`/services/${s.id}/upgrade/confirm`}>
                <Csrf token={csrf} />
                <button type="submit">Confirm {upgrade.toVersion}</button>
              </form>
              <form method="post" action={`/services/${s.id}/upgrade/revert`}>
                <Csrf token={csrf} />
                <Check label={`Go back to ${upgrade.fromVersion}: what was written on ${upgrade.toVersion} since the switch is lost`} name="lose_writes" checked={false} />
                <button type="submit" class="danger">
                  Revert to {upgrade.fromVersion}
                </button>
              </form>
            </div>
          )}
        </>
      ) : (
        <>
          {last?.status === 'failed' && (
            <p class="error" role="status">
              The upgrade to {last.toVersion} failed and was rolled back; {s.name} stays at {last.fromVersion}: {last.error}
            </p>
          )}
          {later.length === 0 ? (
            <p class="muted">{s.version} is the newest version svc offers for {s.type}.</p>
          ) : (
            mayUpgrade && (
              <form method="post" action={`/services/${s.id}/upgrade`} class="row" aria-describedby="upgrade-plan">
                <Csrf token={csrf} />
                <Select label="Upgrade to" name="version" value={later[later.length - 1]} options={later.map((v) => [v, v] as const)} />
                <Field label="Keep the old version (days)" name="keep_days" value="7" inputmode="numeric" autocomplete="off" />
                <button type="submit">Upgrade</button>
                <p id="upgrade-plan" class="muted">
                  {upgradePlan(s, later[later.length - 1])}
                </p>
              </form>
            )
          )}
        </>
      )}
      {own.length > 0 && (
        <ul class="events" aria-label="Upgrade events">
          {own.map((e) => (
            <li>
              <Time at={e.createdAt} /> {e.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
};
