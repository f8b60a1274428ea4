/** @jsxImportSource hono/jsx */
// `/audit`: the audit log, newest first, with the filters of GET /api/audit (a GET form: links can be shared).
import { Hono } from 'hono';
import { auditQueryOf } from '../http/audit-query.js';
import { listAudit } from '../store/audit.js';
import { ORIGINS } from '../desired/context.js';
import { DomainError } from '../errors.js';
import { render, type UiDeps, type UiEnv } from './context.js';
import { Field, Layout, Select, Time } from './layout.js';

export function auditPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  r.get('/audit', (c) => {
    const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([, v]) => v !== ''));
    let error: string | undefined;
    let rows: ReturnType<typeof listAudit> = [];
    try {
      rows = listAudit(deps.db, auditQueryOf(raw));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      error = err.message;
    }
    const q = c.req.query();
    return render(
      c,
      <Layout title="Audit log" csrf={c.var.csrf} user={c.var.user} error={error}>
        <form method="get" action="/audit" class="row">
          <Field label="User" name="user" value={q.user} />
          <Select label="Origin" name="origin" value={q.origin ?? ''} options={[['', 'any'], ...ORIGINS.map((o) => [o, o] as const)]} />
          <Field label="Action" name="action" value={q.action} hint="part of it, e.g. env" />
          <Field label="Target" name="target" value={q.target} />
          <Field label="Since" name="since" value={q.since} placeholder="2026-11-01" />
          <button type="submit" class="secondary">Filter</button>
        </form>
        <p class="muted">Kept 90 days. Field names only, never values.</p>
        <div class="scroll">
          <table id="audit">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">From</th>
                <th scope="col">What</th>
                <th scope="col">On</th>
                <th scope="col">Fields</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr>
                  <td>
                    <Time at={a.at} />
                  </td>
                  <td>{a.username ?? '-'}</td>
                  <td>
                    {a.origin}
                    {a.address ? ` (${a.address})` : ''}
                  </td>
                  <td class="mono">{a.action}</td>
                  <td>{a.target ?? '-'}</td>
                  <td class="mono">{a.fields.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Layout>,
      error ? 400 : 200,
    );
  });
  return r;
}
