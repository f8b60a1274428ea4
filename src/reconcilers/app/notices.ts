// What the app reconciler tells the operator (src/notify/raise.ts): the end of a failed deploy, a
// flip-back, a crash loop and its end. Each is raised at one place: pipeline.ts's `fail` (every deploy that
// ends `failed` or `auto_rollback` before the switch), watch.ts's switch back, heal.ts when the restart
// count reaches CRASH_ALERT_AFTER, and the reconciler when crash-alert.ts says the loop ended (whatever
// ended it: the container stayed up, a deploy or rollback replaced it, scale to 0, deletion). Messages carry what the
// deploy events already show (redacted of the app's secrets there), never an env value.
import { eq } from 'drizzle-orm';
import type { Db } from '../../store/db.js';
import { apps } from '../../store/schema/index.js';
import { raise } from '../../notify/raise.js';
import { getAlert } from '../../store/notify.js';

/** Consecutive restarts without 10 s of uptime that make a crash loop (the third has a 20 s backoff before it). */
export const CRASH_ALERT_AFTER = 3;

/** A reason as one sentence (reasons may or may not end with a period). */
const sentence = (s: string) => s.replace(/[.\s]+$/, '') + '.';

const nameOf = (db: Db, appId: number) => db.select({ name: apps.name }).from(apps).where(eq(apps.id, appId)).get()?.name ?? `app ${appId}`;

export function deployEnded(db: Db, d: { id: number; appId: number }, status: 'failed' | 'auto_rollback', step: string, reason: string): void {
  const app = nameOf(db, d.appId);
  raise(db, {
    event: status === 'failed' ? 'deploy_failed' : 'deploy_auto_rollback',
    subject: status === 'failed' ? `${app}: deploy ${d.id} failed at ${step}` : `${app}: deploy ${d.id} rolled back (${step})`,
    message: status === 'failed' ? `${sentence(reason)} The app keeps running what it ran before.` : sentence(reason),
    link: `/deploys/${d.id}`,
  });
}

export function flippedBack(db: Db, d: { id: number; appId: number }, from: string, to: string, reason: string | null): void {
  const app = nameOf(db, d.appId);
  raise(db, {
    event: 'deploy_flip_back',
    subject: `${app}: deploy ${d.id} failed after the switch; traffic went back to the previous version`,
    message: `${from} failed in the watch window${reason ? ` (${reason})` : ''}; ${to} serves again.`,
    link: `/deploys/${d.id}`,
  });
}

/** Called at every counted restart; the storm rule sends one alert per loop (at most one per 15 min). */
export function crashing(db: Db, appId: number, container: string, failures: number, nextRestartMs: number, nowMs: number): void {
  if (failures < CRASH_ALERT_AFTER) return;
  const app = nameOf(db, appId);
  raise(db, {
    event: 'app_crashing',
    subject: `${app} keeps crashing`,
    message: `The live container ${container} stopped ${failures} times in a row without staying up 10 s. svc keeps restarting it, ${Math.round(nextRestartMs / 1000)} s apart and at most 5 min apart. Its logs are on the app's page.`,
    link: `/apps/${appId}`,
    storm: { key: crashAlertKey(appId), signal: 'fire' },
  }, nowMs);
}

/** The storm key of an app's crash alert: one per app id (the alert outlives a rename, not a deletion). */
export const crashAlertKey = (appId: number) => `app:${appId}:crash`;

/** Whether the app's crash alert was sent and not answered yet (what the reconciler asks before crash-alert.ts). */
export const crashAlertOpen = (db: Db, appId: number): boolean => getAlert(db, crashAlertKey(appId))?.open ?? false;

/** What ended the loop (crash-alert.ts), and what the message names. */
export type RecoveredBy =
  | { why: 'serves'; container: string; deployId: number | null; upSeconds: number }
  | { why: 'scaled_to_zero' }
  | { why: 'deleted'; name: string };

/**
 * Answers the app's crash alert (sent only when one is open: the storm rule): its live container stayed up,
 * whatever made it (a heal, a deploy, a rollback), or nothing runs any more (scaled to 0, deleted).
 */
export function recovered(db: Db, appId: number, by: RecoveredBy, nowMs: number): void {
  const app = by.why === 'deleted' ? by.name : nameOf(db, appId);
  const text =
    by.why === 'serves'
      ? {
          subject: `${app} recovered`,
          message: `${app} serves again: its live container ${by.container}${by.deployId === null ? '' : ` (deploy ${by.deployId})`} has stayed up ${by.upSeconds} s. Self-healing is back to normal.`,
        }
      : by.why === 'scaled_to_zero'
        ? { subject: `${app} recovered: scaled to 0`, message: `${app} was scaled to 0 replicas: nothing of it runs, so nothing crashes. The crash alert is closed.` }
        : { subject: `${app} recovered: deleted`, message: `${app} was deleted with its containers. The crash alert is closed.` };
  raise(db, {
    event: 'app_recovered',
    ...text,
    ...(by.why === 'deleted' ? {} : { link: `/apps/${appId}` }),
    storm: { key: crashAlertKey(appId), signal: 'resolve' },
  }, nowMs);
}
