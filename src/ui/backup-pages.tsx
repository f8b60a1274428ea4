/** @jsxImportSource hono/jsx */
// `/backups`: "Create backup", the list with a download link, "Restore" (after a confirmation page) and
// "Delete" per backup, and the schedule and retention in force. Create and delete call what the REST
// handlers call (delete: the backups command); restore goes through the API's own `POST /api/backups/{id}/restore` in-process.
import { Hono, type Context } from 'hono';
import { deleteBackup } from '../desired/backups.js';
import { DomainError, notFound } from '../errors.js';
import { statusOf } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { createBackup, getBackup, listBackups } from '../store/backups.js';
import { done, flash, readForm, render, type UiDeps, type UiEnv } from './context.js';
import { Badge, Csrf, Layout, PostButton, Time } from './layout.js';

/** Sends a request to the daemon's own API (same process) on behalf of the page's user. */
export type ApiCall = (req: Request) => Response | Promise<Response>;

const size = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function backupPages(deps: UiDeps, api: ApiCall) {
  const r = new Hono<UiEnv>();
  const { db } = deps;
  const backupOf = (c: Context) => {
    const row = getBackup(db, idParam(c, 'id', 'backup'));
    if (!row) throw notFound('backup');
    return row;
  };

  const list = (c: Context<UiEnv>, o: { error?: string; status?: 200 | 400 | 404 | 409 | 422 | 503 } = {}) => {
    const rows = listBackups(db);
    const every = deps.config.backup.intervalMinutes;
    return render(
      c,
      <Layout title="Backups" csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error} refresh={3}>
        <p>
          Schedule: {every > 0 ? `a backup every ${every} minutes` : 'off (SVC_BACKUP_INTERVAL_MINUTES=0)'}; retention: the newest{' '}
          {deps.config.backup.retainCount} backups are kept. Directory: <code>{deps.config.backupDir}</code>.
        </p>
        <PostButton action="/backups" csrf={c.var.csrf} label="Create backup" />
        <div class="scroll spaced" id="backups-table" data-live>
          <table>
            <caption class="sr">Backups</caption>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Status</th>
                <th scope="col">Size</th>
                <th scope="col">Trigger</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colspan={6} class="muted">
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
                    <Time at={b.createdAt} />
                  </td>
                  <td class="actions">
                    {b.status === 'completed' && (
                      <>
                        <a href={`/api/backups/${b.id}/download`} download={b.filename}>
                          Download<span class="sr"> {b.filename}</span>
                        </a>
                        <form method="get" action={`/backups/${b.id}/restore`}>
                          <button type="submit" class="secondary small">
                            Restore<span class="sr"> {b.filename}</span>
                          </button>
                        </form>
                      </>
                    )}
                    {b.status !== 'running' && <PostButton action={`/backups/${b.id}/delete`} csrf={c.var.csrf} label="Delete" context={b.filename} tone="secondary" small />}
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

  const refusal = (c: Context<UiEnv>, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    const status = ([400, 404, 409, 422, 503] as const).find((s) => s === statusOf(err)) ?? 400;
    return list(c, { error: err.message, status });
  };

  r.get('/backups', (c) => list(c));

  r.post('/backups', async (c) => {
    await readForm(c, deps);
    try {
      const row = createBackup(db, deps.enqueue, { trigger: 'manual', now: deps.now() });
      deps.log.info('backup requested', { id: row.id, filename: row.filename });
      return done(c, '/backups', 'backup_created');
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.post('/backups/:id/delete', async (c) => {
    await readForm(c, deps);
    try {
      deleteBackup(deps, idParam(c, 'id', 'backup'), 'ui');
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
    const b = backupOf(c);
    const res = await api(
      new Request(new URL(`/api/backups/${b.id}/restore`, c.req.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: c.req.header('cookie') ?? '' },
        body: '{}',
      }),
    );
    if (res.ok) return done(c, '/backups', 'backup_restored');
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    const noRoute = res.status === 404 && body.error?.startsWith('no route');
    const error = noRoute ? 'restore is not available in this version of svc' : (body.error ?? `restore failed (${res.status})`);
    return list(c, { error, status: res.status === 409 ? 409 : res.status === 503 ? 503 : 400 });
  });

  return r;
}
