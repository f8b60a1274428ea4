/** @jsxImportSource hono/jsx */
// `/backups/targets`: the S3-compatible stores backups are copied to (issue 21 section 1): add, "Test"
// (writes, reads back and deletes a small object, and shows the store's own error when a step fails),
// delete, and `/backups/targets/{id}/copies`, the copies a bucket holds with "Import" for a fresh install.
// Every action calls the commands of src/desired/backup-targets.ts, as the REST handlers do.
import { Hono, type Context } from 'hono';
import { DomainError } from '../errors.js';
import { statusOf } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { createTarget, deleteTarget, importRemote, remoteCopies, requireTarget, testTarget } from '../desired/backup-targets.js';
import type { BackupContext } from '../desired/backups.js';
import { listTargets } from '../store/offsite.js';
import { done, flash, readForm, render, text, type UiDeps, type UiEnv, may } from './context.js';
import { Csrf, Field, Layout, ListTable, PostButton } from './layout.js';
import { targetJson } from '../presenters/backups.js';

const size = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

export function backupTargetPages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const ctx = { db: deps.db, sealer: deps.sealer, log: deps.log, enqueue: deps.enqueue, config: deps.config };
  const backups: BackupContext = { db: deps.db, enqueue: deps.enqueue, log: deps.log, now: deps.now, backupDir: deps.config.backupDir, progress: deps.backups?.progress };
  const key = deps.config.offsite.ageRecipient ? 'an age recipient (SVC_BACKUP_AGE_RECIPIENT)' : deps.config.offsite.passphrase ? 'SVC_BACKUP_PASSPHRASE' : undefined;

  const page = (c: Context<UiEnv>, o: { error?: string; message?: string; status?: 200 | 400 | 404 | 409 | 422 | 503 } = {}) => {
    const manages = may(c, 'POST /backups/targets');
    return render(
      c,
      <Layout title="Backup targets" csrf={c.var.csrf} user={c.var.user} message={o.message ?? flash(c)} error={o.error}>
        <p>
          Every completed backup is copied to each target, encrypted in the age format for {key ?? <strong>nothing yet: set SVC_BACKUP_PASSPHRASE or SVC_BACKUP_AGE_RECIPIENT, until then copies fail</strong>}, and
          verified by reading it back. The newest {deps.config.offsite.retainCount} copies stay in each bucket. <a href="/backups">Back to backups</a>
        </p>
        <ListTable
          spaced
          caption="Backup targets"
          columns={['Name', 'Endpoint', 'Bucket', 'Access key', 'Actions']}
          empty="No targets: backups stay on this host only."
          rows={listTargets(deps.db).map((row) => {
            const t = targetJson(row, deps.sealer);
            return (
              <tr>
                <td>{t.name}</td>
                <td class="mono">{t.endpoint ?? 'AWS S3'} ({t.region})</td>
                <td class="mono">
                  {t.bucket}/{t.prefix}
                </td>
                <td class="mono">{t.access_key_hint}</td>
                <td class="actions">
                  {manages && (
                    <>
                      <PostButton action={`/backups/targets/${t.id}/test`} csrf={c.var.csrf} label="Test" context={t.name} small />
                      <a href={`/backups/targets/${t.id}/copies`}>
                        Copies<span class="sr"> in {t.name}</span>
                      </a>
                      <PostButton action={`/backups/targets/${t.id}/delete`} csrf={c.var.csrf} label="Delete" context={t.name} tone="secondary" small />
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        />
        {manages && (
          <>
            <h2>Add a target</h2>
            <form method="post" action="/backups/targets" class="stack">
              <Csrf token={c.var.csrf} />
              <Field label="Name" name="name" required placeholder="offsite" />
              <Field label="Endpoint" name="endpoint" hint="empty for AWS S3" placeholder="https://s3.example.com" />
              <Field label="Region" name="region" placeholder="us-east-1" />
              <Field label="Bucket" name="bucket" required />
              <Field label="Prefix" name="prefix" hint="empty, or ending in /" placeholder="svc/" />
              <Field label="Access key" name="access_key" required autocomplete="off" />
              <Field label="Secret key" name="secret_key" type="password" required autocomplete="new-password" />
              <button type="submit">Add target</button>
            </form>
          </>
        )}
      </Layout>,
      o.status ?? 200,
    );
  };

  const refusal = (c: Context<UiEnv>, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    const status = ([400, 404, 409, 422, 503] as const).find((s) => s === statusOf(err)) ?? 400;
    return page(c, { error: err.message, status });
  };

  r.get('/backups/targets', (c) => page(c));

  r.post('/backups/targets', async (c) => {
    const f = await readForm(c, deps);
    try {
      const body: Record<string, string> = {};
      for (const k of ['name', 'endpoint', 'region', 'bucket', 'prefix', 'access_key', 'secret_key']) {
        const v = text(f, k);
        if (v !== undefined) body[k] = v;
      }
      createTarget(ctx, body, 'ui');
      return done(c, '/backups/targets', 'target_created');
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.post('/backups/targets/:id/test', async (c) => {
    await readForm(c, deps);
    try {
      const t = requireTarget(ctx, idParam(c, 'id', 'backup target'));
      const res = await testTarget(ctx, t.id, c.req.raw.signal);
      if (res.ok) return page(c, { message: `Target ${t.name} works: a test object was written, read back and deleted in ${res.duration_ms} ms.` });
      return page(c, { error: `Target ${t.name}: the ${res.step} step failed. The store answered: ${res.error}`, status: 422 });
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.post('/backups/targets/:id/delete', async (c) => {
    await readForm(c, deps);
    try {
      deleteTarget(ctx, idParam(c, 'id', 'backup target'), 'ui');
      return done(c, '/backups/targets', 'target_deleted');
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.get('/backups/targets/:id/copies', async (c) => {
    try {
      const t = requireTarget(ctx, idParam(c, 'id', 'backup target'));
      const copies = await remoteCopies(ctx, t.id, c.req.raw.signal);
      return render(
        c,
        <Layout title={`Copies in ${t.name}`} csrf={c.var.csrf} user={c.var.user}>
          <p>
            Encrypted copies under <code>{`${t.bucket}/${t.prefix}`}</code>, newest first. "Import" brings one into this install as a backup
            (decrypted with SVC_BACKUP_PASSPHRASE) that you can then restore. <a href="/backups/targets">Back to targets</a>
          </p>
          <ul>
            {copies.length === 0 && <li class="muted">No copies.</li>}
            {copies.map((x) => (
              <li>
                <span class="mono">{x.key}</span> ({size(x.size)}){' '}
                <PostButton action={`/backups/targets/${t.id}/import`} csrf={c.var.csrf} label="Import" context={x.filename} small>
                  <input type="hidden" name="key" value={x.key} />
                </PostButton>
              </li>
            ))}
          </ul>
        </Layout>,
      );
    } catch (err) {
      return refusal(c, err);
    }
  });

  r.post('/backups/targets/:id/import', async (c) => {
    const f = await readForm(c, deps);
    try {
      importRemote({ ...ctx, backups }, idParam(c, 'id', 'backup target'), { key: text(f, 'key') ?? '' }, 'ui');
      return done(c, '/backups', 'copy_importing');
    } catch (err) {
      return refusal(c, err);
    }
  });

  return r;
}
