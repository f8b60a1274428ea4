/** @jsxImportSource hono/jsx */
// The Backups section of `/services/{id}` (issue 33 section 3): the service's own backups with their
// off-host copies, "Back up now", the schedule and retention, and a restore of one backup into the service
// (asked to be confirmed: its data is replaced, after a safety backup) or into a new service. Writes go
// through the per-service backup commands the REST handlers call (src/desired/service-backups.ts).
import { Hono, type Context } from 'hono';
import type { FC } from 'hono/jsx';
import { backupOpsOf } from '../catalog/service-backup.js';
import { DomainError } from '../errors.js';
import { backupService, restoreService, setBackupPolicy } from '../desired/service-backups.js';
import { idParam } from '../http/request.js';
import type { Db } from '../store/db.js';
import { policyOf, serviceBackupsOf, serviceRestoresOf } from '../store/service-backups.js';
import type { ServiceView } from '../store/service-view.js';
import { serviceBackupJson } from '../presenters/service-backups.js';
import { checked, done, readForm, type UiDeps, type UiEnv, may } from './context.js';
import { Badge, Check, Csrf, Field, PostButton, Time } from './layout.js';

const size = (n: number | null) => (n === null ? '-' : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

export const ServiceBackupsSection: FC<{ c: Context<UiEnv>; db: Db; s: ServiceView }> = ({ c, db, s }) => {
  if (!backupOpsOf(s.type)) {
    return (
      <>
        <h2 id="h-backups">Backups</h2>
        <p class="muted">{s.type} services have no backups of their own yet: their data is in the full backups.</p>
      </>
    );
  }
  const rows = serviceBackupsOf(db, s.id).map((b) => serviceBackupJson(db, b));
  const policy = policyOf(db, s.id);
  const restore = serviceRestoresOf(db, s.id)[0];
  const completed = rows.filter((b) => b.status === 'completed');
  return (
    <>
      <h2 id="h-backups">Backups</h2>
      <p>
        {policy.intervalMinutes > 0 ? `Every ${policy.intervalMinutes} minutes` : 'No scheduled backups'}; the newest {policy.retain} are kept, here and at every backup target.
        {restore && (
          <>
            {' '}Last restore: backup {restore.backupId}, <Badge status={restore.status} /> {restore.error && <span class="muted">{restore.error}</span>}
          </>
        )}
      </p>
      {may(c, 'POST /services/:id/backups') && <PostButton action={`/services/${s.id}/backups`} csrf={c.var.csrf} label="Back up now" />}
      <div class="scroll spaced" id="service-backups" data-live>
        <table>
          <caption class="sr">Backups of {s.name}</caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Status</th>
              <th scope="col">Size</th>
              <th scope="col">Trigger</th>
              <th scope="col">Version</th>
              <th scope="col">Off-host</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && (
              <tr>
                <td colspan={7} class="muted">
                  No backups of this service yet.
                </td>
              </tr>
            )}
            {rows.map((b) => (
              <tr>
                <td class="mono">{b.status === 'completed' ? <a href={`/api/services/${s.id}/backups/${b.id}/download`} download={b.filename}>{b.filename}</a> : b.filename}</td>
                <td>
                  <Badge status={b.status} />
                  {b.error && <span class="muted"> {b.error}</span>}
                </td>
                <td>{size(b.size_bytes)}</td>
                <td>{b.trigger}</td>
                <td>{b.version}</td>
                <td>{b.remote_status === 'none' ? <span class="muted">none</span> : b.remotes.map((r) => `${r.target ?? '?'}: ${r.status}`).join(', ')}</td>
                <td>
                  <Time at={b.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {may(c, 'POST /services/:id/backup') && (
        <form method="post" action={`/services/${s.id}/backup`} class="row">
          <Csrf token={c.var.csrf} />
          <Field label="Interval (minutes)" name="interval_minutes" value={policy.intervalMinutes} inputmode="numeric" hint="0: no scheduled backups" />
          <Field label="Keep" name="retain" value={policy.retain} inputmode="numeric" hint="backups kept" />
          <button type="submit" class="secondary">
            Save schedule
          </button>
        </form>
      )}
      {may(c, 'POST /services/:id/restore') && completed.length > 0 && (
        <form method="post" action={`/services/${s.id}/restore`} class="row">
          <Csrf token={c.var.csrf} />
          <div class="field">
            <label for="restore-backup">Backup</label>
            <select id="restore-backup" name="backup_id">
              {completed.map((b) => (
                <option value={String(b.id)}>
                  {b.id}: {b.created_at} ({b.trigger})
                </option>
              ))}
            </select>
          </div>
          <Field label="Into a new service" name="into" autocomplete="off" hint="empty: into this service (its data is replaced after a safety backup)" />
          <Check label="Replace this service's data when no new service is named" name="confirm" />
          <button type="submit" class="danger">
            Restore
          </button>
        </form>
      )}
    </>
  );
};

/** The section's form posts; a refusal is said on the service page (flash). */
export function serviceBackupPages(deps: UiDeps, detail: (c: Context<UiEnv>, o: { error?: string; status?: 400 | 404 | 409 }) => Response | Promise<Response>) {
  const r = new Hono<UiEnv>();
  const refused = (c: Context<UiEnv>, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    return detail(c, { error: err.message, status: err.kind === 'not_found' ? 404 : err.kind === 'conflict' ? 409 : 400 });
  };
  r.post('/services/:id/backups', async (c) => {
    await readForm(c, deps);
    try {
      backupService(deps, idParam(c, 'id', 'service'), 'ui');
      return done(c, `/services/${idParam(c, 'id', 'service')}`, 'service_backup_started');
    } catch (err) {
      return refused(c, err);
    }
  });
  r.post('/services/:id/backup', async (c) => {
    const form = await readForm(c, deps);
    const num = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : /^[0-9]{1,9}$/.test(v.trim()) ? Number(v.trim()) : v);
    try {
      setBackupPolicy(deps, idParam(c, 'id', 'service'), Object.fromEntries(Object.entries({ interval_minutes: num(form.interval_minutes), retain: num(form.retain) }).filter(([, v]) => v !== undefined)));
      return done(c, `/services/${idParam(c, 'id', 'service')}`, 'service_backup_saved');
    } catch (err) {
      return refused(c, err);
    }
  });
  r.post('/services/:id/restore', async (c) => {
    const form = await readForm(c, deps);
    const into = form.into?.trim();
    try {
      if (!into && !checked(form, 'confirm')) throw new DomainError('invalid', 'invalid_request', "tick \"Replace this service's data\" to restore into this service, or name a new service");
      const backupId = /^[0-9]{1,9}$/.test(form.backup_id ?? '') ? Number(form.backup_id) : form.backup_id;
      const { service } = restoreService(deps, idParam(c, 'id', 'service'), { backup_id: backupId, ...(into ? { into: { name: into } } : {}) }, 'ui');
      return done(c, `/services/${service.id}`, 'service_restore_started');
    } catch (err) {
      return refused(c, err);
    }
  });
  return r;
}
