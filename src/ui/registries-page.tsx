/** @jsxImportSource hono/jsx */
// `/settings/registries`: credentials for private container registries (add, test with the registry's own
// answer, remove). The password is write-only, as in the API; forms go through src/desired/registries.ts.
import { Hono, type Context } from 'hono';
import { createRegistry, deleteRegistry, requireRegistry, testRegistry } from '../desired/registries.js';
import { DomainError } from '../errors.js';
import { idParam } from '../http/request.js';
import { listRegistryCredentials } from '../store/registries.js';
import { readForm, render, text, type UiDeps, type UiEnv, may } from './context.js';
import { Csrf, Field, Layout, ListTable, PostButton, Time } from './layout.js';

interface Extra {
  error?: string;
  status?: 200 | 400 | 404 | 409;
  message?: string;
  /** What a "Test" answered. */
  test?: { server: string; ok: boolean; answer: string };
  /** What was typed before a refusal (never the password). */
  typed?: { server?: string; username?: string };
}

export function registriesPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const ctx = { db: deps.db, sealer: deps.sealer, log: deps.log };

  const page = (c: Context<UiEnv>, o: Extra = {}) => {
    const rows = listRegistryCredentials(deps.db);
    const manages = may(c, 'POST /settings/registries');
    return render(
      c,
      <Layout title="Container registries" csrf={c.var.csrf} user={c.var.user} message={o.message} error={o.error}>
        <p>
          <a href="/settings">Settings</a> / Container registries. svc pulls the images of these registries with their credentials (on a Swarm, every
          node does); images of other registries are pulled anonymously.
        </p>
        {o.test && (
          <div class={`notice ${o.test.ok ? 'ok' : 'error'}`} role="status">
            <p>
              Login to <strong>{o.test.server}</strong>: <code>{o.test.answer}</code>
            </p>
          </div>
        )}
        <ListTable
          caption="Registry credentials"
          columns={['Registry', 'Username', 'Changed', 'Actions']}
          empty="No credentials: only public images can be pulled."
          rows={rows.map((x) => (
            <tr>
              <td class="mono">{x.server}</td>
              <td class="mono">{x.username}</td>
              <td>
                <Time at={x.updatedAt} />
              </td>
              <td class="actions">
                {manages && (
                  <>
                    <PostButton action={`/settings/registries/${x.id}/test`} csrf={c.var.csrf} label="Test" context={x.server} small />
                    <PostButton action={`/settings/registries/${x.id}/delete`} csrf={c.var.csrf} label="Remove" context={x.server} tone="secondary" small />
                  </>
                )}
              </td>
            </tr>
          ))}
        />
        {manages && (
          <section aria-labelledby="h-add-registry">
            <h2 id="h-add-registry">Add credentials</h2>
            <form method="post" action="/settings/registries" class="stack">
              <Csrf token={c.var.csrf} />
              <Field label="Registry" name="server" value={o.typed?.server} required autocomplete="off" hint="as in the image reference: ghcr.io, registry.example.com:5000; Docker Hub: docker.io" />
              <Field label="Username" name="username" value={o.typed?.username} required autocomplete="off" />
              <Field label="Password or token" name="password" type="password" required autocomplete="new-password" hint="stored encrypted, never shown again (a read-only token is enough)" />
              <button type="submit">Add credentials</button>
            </form>
          </section>
        )}
      </Layout>,
      o.status ?? 200,
    );
  };

  r.get('/settings/registries', (c) => page(c));

  r.post('/settings/registries', async (c) => {
    const form = await readForm(c, deps);
    const typed = { server: text(form, 'server'), username: text(form, 'username') };
    try {
      const row = createRegistry(ctx, { server: typed.server ?? '', username: typed.username ?? '', password: form.password ?? '' }, 'ui');
      return page(c, { message: `Credentials for ${row.server} added.` });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return page(c, { error: err.message, typed, status: err.kind === 'conflict' ? 409 : 400 });
    }
  });

  r.post('/settings/registries/:id/test', async (c) => {
    await readForm(c, deps);
    const id = idParam(c, 'id', 'registry credential');
    const { server } = requireRegistry(ctx, id);
    const res = await testRegistry(ctx, deps.runtime, id);
    return page(c, { test: { server, ok: res.ok, answer: res.ok ? res.status : res.error } });
  });

  r.post('/settings/registries/:id/delete', async (c) => {
    await readForm(c, deps);
    deleteRegistry(ctx, idParam(c, 'id', 'registry credential'), 'ui');
    return c.redirect('/settings/registries', 303);
  });

  return r;
}
