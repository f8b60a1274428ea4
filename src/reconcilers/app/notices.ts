// What the app reconciler tells the operator (src/notify/raise.ts): the end of a failed deploy, a
// flip-back, a crash loop and its recovery. Each is raised at one place: pipeline.ts's `fail` (every
// deploy that ends `failed` or `auto_rollback` before the switch), watch.ts's switch back, heal.ts when the
// restart count reaches CRASH_ALERT_AFTER, and the reconciler's heal-counter reset. Messages carry what the
// deploy events already show (redacted of the app's secrets there), never an env value.
import { eq } from 'drizzle-orm';
import type { Db } from '../../store/db.js';
import { apps } from '../../store/schema/index.js';
import { raise, type NoticeTarget } from '../../notify/raise.js';

/** Consecutive restarts without 10 s of uptime that make a crash loop (the third has a 20 s backoff before it). */
export const CRASH_ALERT_AFTER = 3;

/** A reason as one sentence (reasons may or may not end with a period). */
const sentence = (s: string) => s.replace(/[.\s]+$/, '') + '.';

const nameOf = (db: Db, appId: number) => db.select({ name: apps.name }).from(apps).where(eq(apps.id, appId)).get()?.name ?? `app ${appId}`;

export function deployEnded(to: NoticeTarget, d: { id: number; appId: number }, status: 'failed' | 'auto_rollback', step: string, reason: string): void {
  const app = nameOf(to.db, d.appId);
  raise(to, {
    event: status === 'failed' ? 'deploy_failed' : 'deploy_auto_rollback',
    subject: status === 'failed' ? `${app}: deploy ${d.id} failed at ${step}` : `${app}: deploy ${d.id} rolled back (${step})`,
    message: status === 'failed' ? `${sentence(reason)} The app keeps running what it ran before.` : sentence(reason),
    link: `/deploys/${d.id}`,
  });
}

export function flippedBack(target: NoticeTarget, d: { id: number; appId: number }, from: string, to: string, reason: string | null): void {
  const app = nameOf(target.db, d.appId);
  raise(target, {
    event: 'deploy_flip_back',
    subject: `${app}: deploy ${d.id} failed after the switch; traffic went back to the previous version`,
    message: `${from} failed in the watch window${reason ? ` (${reason})` : ''}; ${to} serves again.`,
    link: `/deploys/${d.id}`,
  });
}

/** Called at every counted restart; the storm rule sends one alert per loop (at most one per 15 min). */
export function crashing(to: NoticeTarget, appId: number, container: string, failures: number, nextRestartMs: number, nowMs: number): void {
  if (failures < CRASH_ALERT_AFTER) return;
  const app = nameOf(to.db, appId);
  raise(to, {
    event: 'app_crashing',
    subject: `${app} keeps crashing`,
    message: `The live container ${container} stopped ${failures} times in a row without staying up 10 s. svc keeps restarting it, ${Math.round(nextRestartMs / 1000)} s apart and at most 5 min apart. Its logs are on the app's page.`,
    link: `/apps/${appId}`,
    storm: { key: `app:${appId}:crash`, signal: 'fire' },
  }, nowMs);
}

/** Called when the restart counter is reset (up 10 s); says something only after an alert was sent. */
export function recovered(to: NoticeTarget, appId: number, nowMs: number): void {
  const app = nameOf(to.db, appId);
  raise(to, {
    event: 'app_recovered',
    subject: `${app} recovered`,
    message: `${app} has stayed up after crashing; self-healing is back to normal.`,
    link: `/apps/${appId}`,
    storm: { key: `app:${appId}:crash`, signal: 'resolve' },
  }, nowMs);
}
