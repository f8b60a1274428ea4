/** @jsxImportSource hono/jsx */
// `/settings/notifications`: notification channels (add, test with the provider's real answer, enable or
// disable, delete) and the delivery log. Forms become the same JSON the REST body would be and go through
// the same command (src/desired/notify.ts); secrets are write-only here as in the API.
import { Hono, type Context } from 'hono';
import { createChannel, deleteChannel, updateChannel } from '../desired/notify.js';
import { DomainError } from '../errors.js';
import { idParam } from '../http/request.js';
import { publicBaseUrl } from '../http/transport.js';
import { SELECTABLE_EVENTS } from '../notify/events.js';
import { sendTest } from '../notify/test-send.js';
import { getChannel, listChannels, listDeliveries } from '../store/notify.js';
import { checked, defined, int, readForm, render, text, type Form, type UiDeps, type UiEnv, may } from './context.js';
import { Check, Csrf, Field, Layout, ListTable, PostButton, Select, Time } from './layout.js';
import { deliveryJson } from '../presenters/notify.js';

interface Extra {
  error?: string;
  status?: 200 | 400 | 404 | 409;
  message?: string;
  /** The signing secret of a webhook channel just created: shown once. */
  secret?: { name: string; value: string };
  /** The answer of a test send. */
  test?: { name: string; ok: boolean; answer: string };
}

const TYPES = [
  ['webhook', 'Webhook (Standard Webhooks, signed)'],
  ['slack', 'Slack, Mattermost or Rocket.Chat incoming webhook'],
  ['discord', 'Discord webhook'],
  ['ntfy', 'ntfy topic'],
  ['email', 'Email (SMTP)'],
] as const;

/** The form's fields as the command's JSON input. */
function channelInput(f: Form) {
  const type = text(f, 'type') ?? '';
  const events = SELECTABLE_EVENTS.filter((e) => checked(f, `event_${e}`));
  const config =
    type === 'email'
      ? defined({
          host: text(f, 'smtp_host'),
          port: int(f, 'smtp_port'),
          security: text(f, 'smtp_security'),
          username: text(f, 'smtp_username'),
          password: f.smtp_password || undefined,
          from: text(f, 'smtp_from'),
          to: (text(f, 'smtp_to') ?? '').split(/[,\s]+/).filter(Boolean),
        })
      : defined({ url: text(f, 'url'), secret: type === 'webhook' ? text(f, 'secret') : undefined, token: type === 'ntfy' ? text(f, 'token') : undefined });
  return { name: text(f, 'name') ?? '', type, events, config };
}

export function notifyPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();

  const page = (c: Context<UiEnv>, o: Extra = {}) => {
    const channels = listChannels(deps.db);
    const log = listDeliveries(deps.db, { limit: 50 }).map(deliveryJson);
    const manages = may(c, 'POST /settings/notifications');
    if (o.secret) c.header('cache-control', 'no-store');
    return render(
      c,
      <Layout title="Notifications" csrf={c.var.csrf} user={c.var.user} message={o.message} error={o.error}>
        <p>
          <a href="/settings">Settings</a> / Notifications. Links in messages start with <code>{publicBaseUrl(c, deps.config)}</code> (set <code>SVC_PUBLIC_URL</code> to change it).
        </p>
        {o.secret && (
          <div class="notice ok" role="status">
            <p>
              Channel <strong>{o.secret.name}</strong> created. Its signing secret (verify <code>webhook-signature</code> with it) is shown only this once:
            </p>
            <code class="token">{o.secret.value}</code>
          </div>
        )}
        {o.test && (
          <div class={`notice ${o.test.ok ? 'ok' : 'error'}`} role="status">
            <p>
              Test to <strong>{o.test.name}</strong>: {o.test.ok ? 'delivered' : 'not delivered'}. The provider answered: <code>{o.test.answer}</code>
            </p>
          </div>
        )}
        <section aria-labelledby="h-channels">
          <h2 id="h-channels">Channels</h2>
          <ListTable
            caption="Notification channels"
            columns={['Name', 'Type', 'Target', 'Events', 'Actions']}
            empty="No channels: nobody is told when something fails."
            rows={channels.map((ch) => (
              <tr>
                <td>
                  {ch.name}
                  {!ch.enabled && <span class="muted"> (disabled)</span>}
                </td>
                <td>{ch.type}</td>
                <td class="mono">{ch.target}</td>
                <td>{ch.events.join(', ')}</td>
                <td class="actions">
                  {manages && (
                    <>
                      <PostButton action={`/settings/notifications/${ch.id}/test`} csrf={c.var.csrf} label="Test" context={`channel ${ch.name}`} small />
                      <PostButton action={`/settings/notifications/${ch.id}/${ch.enabled ? 'disable' : 'enable'}`} csrf={c.var.csrf} label={ch.enabled ? 'Disable' : 'Enable'} context={`channel ${ch.name}`} tone="secondary" small />
                      <PostButton action={`/settings/notifications/${ch.id}/delete`} csrf={c.var.csrf} label="Delete" context={`channel ${ch.name}`} tone="danger" small />
                    </>
                  )}
                </td>
              </tr>
            ))}
          />
        </section>
        {manages && (
          <section aria-labelledby="h-add">
            <h2 id="h-add">Add a channel</h2>
            <form method="post" action="/settings/notifications">
              <Csrf token={c.var.csrf} />
              <Field label="Name" name="name" required autocomplete="off" hint="lowercase letters, digits and dashes" />
              <Select label="Type" name="type" options={TYPES} />
              <fieldset>
                <legend>Webhook, Slack-compatible, Discord, ntfy</legend>
                <Field label="URL" name="url" type="url" hint="the incoming-webhook URL, or the ntfy topic URL; stored encrypted, never shown again" autocomplete="off" />
                <Field label="Signing secret" name="secret" hint="webhook only: whsec_…; empty: svc makes one" autocomplete="off" />
                <Field label="Access token" name="token" hint="ntfy only, optional" autocomplete="off" />
              </fieldset>
              <fieldset>
                <legend>Email</legend>
                <Field label="SMTP host" name="smtp_host" autocomplete="off" />
                <Field label="SMTP port" name="smtp_port" inputmode="numeric" placeholder="587" />
                <Select label="Security" name="smtp_security" options={[['starttls', 'STARTTLS (587)'], ['tls', 'TLS (465)'], ['none', 'none (a local relay)']]} />
                <Field label="Username" name="smtp_username" autocomplete="off" />
                <Field label="Password" name="smtp_password" type="password" autocomplete="new-password" />
                <Field label="From" name="smtp_from" type="email" />
                <Field label="To" name="smtp_to" hint="one or more addresses, separated by commas" />
              </fieldset>
              <fieldset>
                <legend>Events</legend>
                {SELECTABLE_EVENTS.map((e) => (
                  <Check label={e} name={`event_${e}`} checked />
                ))}
              </fieldset>
              <button type="submit">Add channel</button>
            </form>
          </section>
        )}
        <section aria-labelledby="h-log">
          <h2 id="h-log">Delivery log</h2>
          <ListTable
            caption="Last 50 deliveries"
            columns={['Time', 'Channel', 'Event', 'Attempt', 'Answer']}
            empty="Nothing sent yet."
            rows={log.map((d) => (
              <tr>
                <td>
                  <Time at={d.at} />
                </td>
                <td>{d.channel}</td>
                <td>{d.event}</td>
                <td>{d.attempt}</td>
                <td class={d.ok ? 'mono' : 'mono error'}>{d.answer}</td>
              </tr>
            ))}
          />
        </section>
      </Layout>,
      o.status ?? 200,
    );
  };

  const refused = (c: Context<UiEnv>, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    return page(c, { error: err.message, status: err.kind === 'conflict' ? 409 : err.kind === 'not_found' ? 404 : 400 });
  };

  r.get('/settings/notifications', (c) => page(c));

  r.post('/settings/notifications', async (c) => {
    const form = await readForm(c, deps);
    try {
      const created = createChannel(deps, channelInput(form), 'ui');
      return page(c, { message: `Channel ${created.name} added.`, secret: created.secret ? { name: created.name, value: created.secret } : undefined });
    } catch (err) {
      return refused(c, err);
    }
  });

  r.post('/settings/notifications/:id/test', async (c) => {
    await readForm(c, deps);
    const id = idParam(c, 'id', 'channel');
    const name = getChannel(deps.db, id).name;
    const answer = await sendTest({ db: deps.db, sealer: deps.sealer, baseUrl: publicBaseUrl(c, deps.config) }, id);
    return page(c, { test: { name, ok: answer.ok, answer: answer.answer } });
  });

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    r.post(`/settings/notifications/:id/${action}`, async (c) => {
      await readForm(c, deps);
      updateChannel(deps, idParam(c, 'id', 'channel'), { enabled }, 'ui');
      return c.redirect('/settings/notifications', 303);
    });
  }

  r.post('/settings/notifications/:id/delete', async (c) => {
    await readForm(c, deps);
    deleteChannel(deps, idParam(c, 'id', 'channel'), 'ui');
    return c.redirect('/settings/notifications', 303);
  });

  return r;
}
