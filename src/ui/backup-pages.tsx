/** @jsxImportSource hono/jsx */
// `/backups`: "Create backup", the list with a download link, "Restore" (after a confirmation page) and
// "Delete" per backup, and the schedule and retention in force. Every action calls the backup commands
// (src/desired/backups.ts) the REST handlers call. A restore is a persisted operation: the form asks for
// it and lands on `/restores/{id}`, which shows its phase and refreshes itself until it has settled.
import { Hono, type Context } from 'hono';
import { DomainError, notFound } from '../errors.js';
import { statusOf } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { archiveRemoved, createBackup, deleteBackup, getRestoreOp, requestRestore, type BackupContext } from '../desired/backups.js';
import { getBackup, listBackups } from '../store/backups.js';
import { listTargets } from '../store/offsite.js';
import { uploadNow } from '../desired/backup-targets.js';
import { done, flash, may, readForm, render, type UiDeps, type UiEnv } from './context.js';
import { Badge, Csrf, Layout, PostButton, Time } from './layout.js';
import { remoteFields } from '../presenters/backups.js';

const size = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

/** What each restore phase means to the person waiting. */
const PHASE_TEXT: Record<string, string> = {
  pending: 'Waiting to start.',
  unpacking: 'Unpacking and checking the archive.',
  safety_backup: 'Taking a safety backup of the current state.',
  swapping: 'Replacing the database and the service data (apps and services are paused).',
  committed: 'Restored; cleaning up.',
  completed: 'Restored. Apps and services are returning to what they were when the backup was made.',
  failed: 'Failed; the previous state was put back.',
};

export function backupPages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;
  const ctx: BackupContext = { db, enqueue: deps.enqueue, log: deps.log, now: deps.now, backupDir: deps.config.backupDir, progress: deps.backups?.progress };
  const backupOf = (c: Context) => {
    const row = getBackup(db, idParam(c, 'id', 'backup'));
    if (!row) throw notFound('backup');
    return row;
  };

  const list = (c: Context<UiEnv>, o: { error?: string; status?: 200 | 400 | 404 | 409 | 422 | 503 } = {}) => {
    const rows = listBackups(db);
    const targets = listTargets(db);
    const every = deps.config.backup.intervalMinutes;
    return render(
      c,
      <Layout title="Backups" csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error} refresh={3}>
        <p>
          Schedule: {every > 0 ? `a backup every ${every} minutes` : 'off (SVC_BACKUP_INTERVAL_MINUTES=0)'}; retention: the newest{' '}
          {deps.config.backup.retainCount} backups are kept. Directory: <code>{deps.config.backupDir}</code>.
        </p>
        <p>
          Off-host copies: {targets.length === 0 ? 'none (backups stay on this host)' : targets.map((t) => t.name).join(', ')}.{' '}
          <a href="/backups/targets">Backup targets</a>
        </p>
        {may(c, 'POST /backups') && <PostButton action="/backups" csrf={c.var.csrf} label="Create backup" />}
        <div class="scroll spaced" id="backups-table" data-live>
          <table>
            <caption class="sr">Backups</caption>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Status</th>
                <th scope="col">Size</th>
                <th scope="col">Trigger</th>
                <th scope="col">Off-host</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colspan={7} class="muted">
                    No backups yet.
                  </td>
                </tr>
              )}
              {rows.map((b) => (
                <tr>
                  <td class="mono">
                    {b.status === 'completed' ? <a href={`/api/backups/${b.id}/download`} download={b.filename}>{b.filename}</a> : b.filename}
                  </td>
                  <td>
                    <Badge status={b.status} />
                    {b.error && <span class="muted"> {b.error}</span>}
                  </td>
                  <td>{b.status === 'completed' ? size(b.sizeBytes) : '-'}</td>
                  <td>{b.trigger}</td>
                  <td>
                    <Remote id={b.id} csrf={c.var.csrf} retry={may(c, 'POST /backups/:id/upload')} />
                  </td>
                  <td>
                    <Time at={b.createdAt} />
                  </td>
                  <td class="actions">
                    {b.status === 'completed' && (
                      <>
                        {may(c, 'GET /api/backups/:id/download') && (
                          <a href={`/api/backups/${b.id}/download`} download={b.filename}>
                            Download<span class="sr"> {b.filename}</span>
                          </a>
                        )}
                        {may(c, 'GET /backups/:id/restore') && (
                          <form method="get" action={`/backups/${b.id}/restore`}>
                            <button type="submit" class="secondary small">
                              Restore<span class="sr"> {b.filename}</span>
                            </button>
                          </form>
                        )}
                      </>
                    )}
                    {b.status !== 'running' && may(c, 'POST /backups/:id/delete') && <PostButton action={`/backups/${b.id}/delete`} csrf={c.var.csrf} label="Delete" context={b.filename} tone="secondary" small />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Layout>,
      o.status ?? 200,
    );
  };

  // The copy of a backup in its targets: never shown as success unless every target verified it.
  const Remote = ({ id, csrf, retry }: { id: number; csrf: string; retry: boolean }) => {
    const r = remoteFields(db, id);
    if (r.remote_status === 'none') return <span class="muted">-</span>;
    const failed = r.remotes.filter((x) => x.status === 'remote_failed');
    return (
      <>
        <Badge status={r.remote_status === 'remote_failed' ? 'failed' : r.remote_status === 'verified' ? 'completed' : r.remote_status === 'pending' ? 'running' : 'idle'} />{' '}
        <span data-remote-status={r.remote_status}>{r.remote_status}</span>
        {failed.map((x) => (
          <span class="muted">
            {' '}
            {x.target}: {x.error} (attempt {x.attempts}, next at {x.next_attempt_at})
          </span>
        ))}
        {failed.length > 0 && retry && <PostButton action={`/backups/${id}/upload`} csrf={csrf} label="Retry now" small tone="secondary" />}
      </>
    );
  };

  const refusal = (c: Context<UiEnv>, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    const status = ([400, 404, 409, 422, 503] as const).find((s) => s === statusOf(err)) ?? 400;
    return list(c, { error: err.message, status });
  };

  r.get('/backups', (c) => list(c));

  r.post('/backups', async (c) => {
    await readForm(c, deps);
    try {
      createBackup(ctx, 'ui');
      return done(c, '/backups', 'backup_created');
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.post('/backups/:id/upload', async (c) => {
    await readForm(c, deps);
    try {
      uploadNow({ db, sealer: deps.sealer, log: deps.log, enqueue: deps.enqueue, config: deps.config }, backupOf(c).id, 'ui');
      return done(c, '/backups', 'upload_queued');
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.post('/backups/:id/delete', async (c) => {
    await readForm(c, deps);
    try {
      // As the API: the page comes back once the archive is gone too (bounded; it goes at the next pass after).
      await archiveRemoved(ctx, deleteBackup(ctx, backupOf(c).id, 'ui'), c.req.raw.signal, deps.backups?.deleteWaitMs);
      return done(c, '/backups', 'backup_deleted');
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.get('/backups/:id/restore', (c) => {
    const b = backupOf(c);
    return render(
      c,
      <Layout title={`Restore ${b.filename}?`} csrf={c.var.csrf} user={c.var.user}>
        <p>
          svc first takes a safety backup of the current state, then replaces the database and the service data with this backup's and
          reloads. Apps and services return to what they were when it was made.
        </p>
        <form method="post" action={`/backups/${b.id}/restore`} class="actions">
          <Csrf token={c.var.csrf} />
          <button type="submit" class="danger">
            Restore
          </button>
          <a href="/backups">Cancel</a>
        </form>
      </Layout>,
    );
  });

  r.post('/backups/:id/restore', async (c) => {
    await readForm(c, deps);
    try {
      const op = requestRestore(ctx, backupOf(c).id, 'ui');
      return c.redirect(`/restores/${op.id}`, 303);
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.get('/restores/:id', (c) => {
    const op = getRestoreOp(ctx, idParam(c, 'id', 'restore'));
    const b = getBackup(db, op.backupId);
    const settled = op.phase === 'completed' || op.phase === 'failed';
    return render(
      c,
      <Layout title={`Restore of ${b?.filename ?? `backup ${op.backupId}`}`} csrf={c.var.csrf} user={c.var.user} refresh={settled ? undefined : 2}>
        <div id="restore-progress" data-live>
          <p>
            <Badge status={op.phase === 'completed' ? 'completed' : op.phase === 'failed' ? 'failed' : 'running'} /> <span data-phase={op.phase}>{PHASE_TEXT[op.phase]}</span>
          </p>
          {op.error && <p class="error">{op.error}</p>}
          {op.safetyBackupId && <p class="muted">Safety backup: #{op.safetyBackupId} (listed on the backups page).</p>}
          {!settled && (
            <p class="muted">
              This page updates itself; <a href={`/restores/${op.id}`}>reload</a> if it does not.
            </p>
          )}
        </div>
        <p>
          <a href="/backups">Back to backups</a>
        </p>
      </Layout>,
    );
  });

  return r;
}
