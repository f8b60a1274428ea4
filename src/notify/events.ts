// The events a channel can choose (API.md "Notifications"). Each is raised at one place in the code; the
// list is the contract the API validates a channel's `events` against.
export const NOTIFY_EVENTS = [
  'deploy_failed', // a deploy ended `failed` (validate, build, start...)
  'deploy_auto_rollback', // the new version failed its health check before the switch; the old one serves
  'deploy_flip_back', // the new version failed in the watch window after the switch; traffic went back
  'app_crashing', // the live container keeps crashing (self-healing backs off)
  'app_recovered', // ... and then stayed up (sent only after an `app_crashing` was)
  'service_error', // a managed service is in `error`
  'service_recovered', // ... and is `active` again (only after a `service_error` was sent)
  'backup_failed', // a backup ended `failed`
  'backup_upload_failed', // its off-host copy failed or did not verify (raised by src/offsite)
  'backup_upload_recovered', // ... and a copy to that target verified again (only after a failure was announced)
  'disk_full', // the data directory's file system is over 90 % used
  'disk_ok', // ... and back under 85 % (only after a `disk_full` was sent)
  'job_failed', // a scheduled job's run failed, timed out or could not start (src/jobs/report.ts)
  'job_recovered', // ... and a later run of that job succeeded (only after a `job_failed` was sent)
  'node_down', // a Swarm node went down or lost its manager (src/cluster/node-events.ts)
  'node_recovered', // ... and is ready again (only after a `node_down` was sent)
  'certificate_failed', // Caddy cannot get the certificate of an app's domain (its TLS log; src/certs/watch.ts)
  'certificate_recovered', // ... and then obtained one (only after a `certificate_failed` was sent)
  'test', // the "test" action; not selectable
] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** What a channel may subscribe to. */
export const SELECTABLE_EVENTS = NOTIFY_EVENTS.filter((e) => e !== 'test');
