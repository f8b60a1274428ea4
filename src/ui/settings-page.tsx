/** @jsxImportSource hono/jsx */
// `/settings`: code-host setup ("Create GitHub App" posts the manifest to the platform with a single-use
// state from the same function as GET /api/codehost/manifest; the manual registration values of SPEC.md
// 4.7 with this host's URLs; the webhook secret masked with "Reveal") and API tokens ("Token name",
// "Create token", the token shown once, "Delete" per token).
import { Hono, type Context } from 'hono';
import { CALLBACK_PATH, WEBHOOK_PATH, startManifestFlow } from '../codehost/manifest.js';
import { createToken, deleteToken } from '../desired/tokens.js';
import { DomainError } from '../errors.js';
import { idParam } from '../http/request.js';
import { publicBaseUrl } from '../http/transport.js';
import { listApiTokens } from '../store/tokens.js';
import { statusOf as httpStatus } from '../http/errors.js';
import { defined, done, flash, int, readForm, render, type UiDeps, type UiEnv, may } from './context.js';
import { formError } from './field-errors.js';
import { createShowOnce } from './show-once.js';
import { MASK } from './app-view.js';
import { Csrf, Field, Layout, PostButton, Time } from './layout.js';

interface SettingsExtra {
  error?: string;
  status?: 200 | 400 | 409;
  /** The page of a token already shown (a reload, or a handle that expired). */
  gone?: boolean;
  /** A token just created: shown this once. */
  created?: { name: string; token: string };
  /** The webhook secret, after a no-script "Reveal". */
  secret?: string;
}

export function settingsPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;
  const secret = () => deps.codehost?.get().webhookSecret ?? deps.config.codehost.webhookSecret;

  const page = (c: Context<UiEnv>, o: SettingsExtra = {}) => {
    const base = publicBaseUrl(c, deps.config);
    const creds = deps.codehost?.get() ?? {};
    const flow = startManifestFlow(db, { webUrl: deps.config.codehost.webUrl, baseUrl: base, userId: c.var.user.id, now: deps.now() });
    const failed = c.req.query('codehost_error') ?? c.req.query('error');
    const tokens = listApiTokens(db, c.var.user.id);
    const hasSecret = Boolean(secret());
    if (o.secret !== undefined || o.created) c.header('cache-control', 'no-store');
    return render(
      c,
      <Layout title="Settings" csrf={c.var.csrf} user={c.var.user} message={flash(c) ?? (c.req.query('codehost') === 'created' ? 'GitHub App created; its credentials are stored and in use.' : undefined)} error={o.error ?? (failed ? `Code-host setup failed: ${failed}` : undefined)}>
        <p>
          <a href="/settings/notifications">Notifications</a>: where svc tells you about failed deploys, crash loops, services in error, failed
          backups and a full disk. <a href="/settings/registries">Container registries</a>: credentials for private images.
        </p>
        <section aria-labelledby="h-codehost">
          <h2 id="h-codehost">Code host</h2>
          <p>
            {creds.appId ? (
              <>
                Connected as app <strong>{creds.appSlug ?? creds.appId}</strong> (id {creds.appId}).
              </>
            ) : (
              'No code-host app is configured yet. Create one in two clicks, or register it by hand with the values below.'
            )}
          </p>
          <form method="post" action={flow.post_url}>
            <input type="hidden" name="manifest" value={JSON.stringify(flow.manifest)} />
            <button type="submit">Create GitHub App</button>
          </form>
          <h3>Manual registration</h3>
          <dl class="facts">
            <dt>Homepage URL</dt>
            <dd class="mono">{base}</dd>
            <dt>Callback URL</dt>
            <dd class="mono">{base + CALLBACK_PATH}</dd>
            <dt>Setup URL</dt>
            <dd class="muted">empty</dd>
            <dt>Webhook active</dt>
            <dd>yes</dd>
            <dt>Webhook URL</dt>
            <dd class="mono">{base + WEBHOOK_PATH}</dd>
            <dt>Webhook secret</dt>
            <dd>
              {hasSecret ? (
                <span class="actions">
                  <span id="webhook-secret" class="mono" data-mask={MASK}>
                    {o.secret ?? MASK}
                  </span>
                  {may(c, 'POST /settings/webhook-secret') && (
                    <form method="post" action="/settings/webhook-secret" data-reveal="/settings/webhook-secret" data-target="webhook-secret">
                      <Csrf token={c.var.csrf} />
                      <button type="submit" class="secondary small">
                        Reveal<span class="sr"> webhook secret</span>
                      </button>
                    </form>
                  )}
                </span>
              ) : (
                <span class="muted">not set: put a random secret in SVC_CODEHOST_WEBHOOK_SECRET (the manifest flow sets one)</span>
              )}
            </dd>
            <dt>Disabled options</dt>
            <dd>expiring user tokens, user authorization during installation, device flow, redirect on update</dd>
            <dt>Repository permissions</dt>
            <dd>Contents: read and write; Actions: read and write; Metadata: read-only; Packages: read-only; all others: no access</dd>
            <dt>Subscribed events</dt>
            <dd>Workflow run, Push, Installation</dd>
            <dt>Installation scope</dt>
            <dd>own account only, or any account</dd>
          </dl>
          <p class="muted">
            CI without an app: store the webhook URL and secret as <code>SVC_URL</code> and <code>WEBHOOK_SIGNATURE</code> and post a signed
            <code> workflow_run</code> delivery after pushing the image.
          </p>
        </section>
        <section aria-labelledby="h-tokens">
          <h2 id="h-tokens">API tokens</h2>
          {o.created && (
            <div class="notice ok" role="status">
              <p>
                Token <strong>{o.created.name}</strong> created. Copy it now: it is shown only this once.
              </p>
              <code class="token" id="new-token">
                {o.created.token}
              </code>
            </div>
          )}
          {o.gone && (
            <p class="notice info" role="status">
              That token was shown once and is not shown again. If you did not copy it, delete it below and create another.
            </p>
          )}
          <form method="post" action="/settings/tokens" class="row">
            <Csrf token={c.var.csrf} />
            <Field label="Token name" name="name" required autocomplete="off" hint="e.g. ci or laptop" />
            <Field label="Scopes" name="scopes" value="admin" autocomplete="off" hint="read, admin (all your role allows) or deploy:<app>, space-separated" />
            <Field label="Expires in days" name="expires_in_days" inputmode="numeric" autocomplete="off" hint="blank: never" />
            <button type="submit">Create token</button>
          </form>
          <div class="scroll">
            <table>
              <caption class="sr">API tokens</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {tokens.length === 0 && (
                  <tr>
                    <td colspan={6} class="muted">
                      No tokens.
                    </td>
                  </tr>
                )}
                {tokens.map((t) => (
                  <tr>
                    <td>{t.name}</td>
                    <td class="mono">{t.scopes.join(' ')}</td>
                    <td>
                      <Time at={t.expires_at} />
                    </td>
                    <td>
                      <Time at={t.created_at} />
                    </td>
                    <td>
                      <Time at={t.last_used_at} />
                    </td>
                    <td>
                      <PostButton action={`/settings/tokens/${t.id}/delete`} csrf={c.var.csrf} label="Delete" context={`token ${t.name}`} tone="secondary" small />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      </Layout>,
      o.status ?? 200,
    );
  };

  // A new token is shown by the GET the create redirects to, once: a reload neither repeats the POST
  // (another token) nor shows the secret again.
  const fresh = createShowOnce<{ name: string; token: string }>();

  r.get('/settings', (c) => {
    const handle = c.req.query('token');
    if (handle === undefined) return page(c);
    const created = fresh.take(c.var.user.id, handle);
    return created ? page(c, { created }) : page(c, { gone: true });
  });

  r.post('/settings/tokens', async (c) => {
    const form = await readForm(c, deps);
    try {
      const days = int(form, 'expires_in_days');
      const scopes = (form.scopes ?? '').split(/[\s,]+/).filter(Boolean);
      const created = createToken(deps, c.var.user, defined({ name: form.name ?? '', scopes: scopes.length ? scopes : undefined, expires_in_days: days }));
      return c.redirect(`/settings?token=${fresh.put(c.var.user.id, { name: created.name, token: created.token })}#h-tokens`, 303);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const s = httpStatus(err);
      return page(c, { error: formError(err, { name: 'Token name' }), status: s === 409 ? 409 : 400 });
    }
  });

  r.post('/settings/tokens/:id/delete', async (c) => {
    await readForm(c, deps);
    deleteToken(deps, c.var.user.id, idParam(c, 'id', 'token'));
    return done(c, '/settings', 'token_deleted');
  });

  // "Reveal" of the webhook secret: JSON for the script (a GET another site cannot read), the page without it.
  r.get('/settings/webhook-secret', (c) => {
    c.header('cache-control', 'no-store');
    deps.log.info('webhook secret revealed', { by: c.var.user.username });
    return c.json({ value: secret() ?? '' });
  });
  r.post('/settings/webhook-secret', async (c) => {
    await readForm(c, deps);
    deps.log.info('webhook secret revealed', { by: c.var.user.username });
    return page(c, { secret: secret() ?? '' });
  });

  return r;
}
