/** @jsxImportSource hono/jsx */
// Routes of the stack pages (issue 32): /stacks (the list), /stacks/new (paste a Compose file: "Plan" shows
// the dry run, then "Create stack"), /stacks/{id} (its services with status and the way to their logs,
// terminal and metrics, the last deploy's steps, events, variables, the file with "Plan changes" and
// "Save and deploy", Deploy, Rollback, Delete), /templates and /templates/{name} (deploy a one-click
// template). Every write is the command the REST handler calls (src/desired/stacks.ts, stack-templates.ts).
import { Hono, type Context } from 'hono';
import { mayOpenTerminal } from '../terminal/access.js';
import { createStack, deleteStack, deployStack, rollbackStack, updateStack, type StackPlan } from '../desired/stacks.js';
import { createStackFromTemplate } from '../desired/stack-templates.js';
import { envKeySchema } from '../desired/fields.js';
import { DomainError, notFound } from '../errors.js';
import { statusOf as httpStatus } from '../http/errors.js';
import { idParam } from '../http/request.js';
import { stackPlanJson } from '../presenters/stacks.js';
import { getStack, listStackEvents, listStackVars } from '../store/stacks.js';
import { findTemplate, listTemplates, type StackTemplate } from '../stacks/templates.js';
import { checked, done, flash, may, readForm, render, text, type Form, type UiDeps, type UiEnv } from './context.js';
import { formError } from './field-errors.js';
import { Check, Csrf, Field, Layout, ListTable, PostButton } from './layout.js';
import { ComposeForm, PlanTable, ServicesOfStack, StackDeployView, StackEvents, StacksTable, parseVariableLines, stackJsonOf, stacksJson, type ComposeFormValues, type PlanJson, type StackJson } from './stack-view.js';

type Status = 200 | 400 | 403 | 404 | 409 | 413 | 422 | 500;
const statusOf = (err: unknown): Status => {
  const s = httpStatus(err);
  return s === 401 || s === 429 || s === 503 ? 500 : s;
};

/** The plan a refused create or update carried (`details.services`), so the page still shows it per service. */
function planOfError(err: DomainError): PlanJson | undefined {
  const d = err.details as { problems?: StackPlan['problems']; services?: StackPlan['services'] } | undefined;
  if (!d?.services) return undefined;
  return { ok: false, services: d.services, problems: (d.problems ?? []).filter((p) => !p.service), warnings: [] };
}

const EVENTS_SHOWN = 50;

export function stackPages(deps: UiDeps) {
  const r = new Hono<UiEnv>();
  const { db } = deps;

  const json = (id: number): StackJson => {
    const s = stackJsonOf(deps, id);
    if (!s) throw notFound('stack');
    return s;
  };

  // --- the list ---

  r.get('/stacks', (c) => {
    const stacks = stacksJson(deps);
    return render(
      c,
      <Layout title="Stacks" csrf={c.var.csrf} user={c.var.user} message={flash(c)} refresh={5}>
        <p>A stack runs a Docker Compose file; each of its services is one of svc's apps, deployed service by service with svc's health checks and zero-downtime switches.</p>
        {may(c, 'POST /stacks/new') && (
          <p class="actions">
            <a class="button" href="/stacks/new">
              New stack
            </a>
            <a class="button secondary" href="/templates">
              New from template
            </a>
          </p>
        )}
        <StacksTable stacks={stacks} />
      </Layout>,
    );
  });

  // --- create from a pasted file ---

  const newPage = (c: Context<UiEnv>, v: ComposeFormValues, o: { plan?: PlanJson; error?: string; status?: Status } = {}) =>
    render(
      c,
      <Layout title="New stack" csrf={c.var.csrf} user={c.var.user} error={o.error}>
        <ComposeForm action="/stacks/new" csrf={c.var.csrf} v={v} create planned={o.plan?.ok ?? false} submit="Create stack" />
        {o.plan && <PlanTable plan={o.plan} />}
      </Layout>,
      o.status ?? 200,
    );

  const bodyOf = (f: Form) => ({
    name: text(f, 'name') ?? '',
    compose: f.compose ?? '',
    variables: [...parseVariableLines(f.variables, false), ...parseVariableLines(f.secrets, true)],
  });

  r.get('/stacks/new', (c) => newPage(c, {}));
  r.post('/stacks/new', async (c) => {
    const form = await readForm(c, deps);
    const v: ComposeFormValues = { name: form.name, compose: form.compose, variables: form.variables, secrets: form.secrets };
    const dryRun = form.intent !== 'apply';
    try {
      const result = createStack(deps, bodyOf(form), 'ui', { dryRun, changedBy: c.var.user.username });
      if (dryRun) return newPage(c, v, { plan: stackPlanJson(result.plan) });
      return done(c, `/stacks/${result.stack.id}`, 'stack_created');
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) === 500) throw err;
      return newPage(c, v, { error: formError(err), status: statusOf(err), plan: planOfError(err) });
    }
  });

  // --- one stack ---

  const page = (c: Context<UiEnv>, id: number, o: { plan?: PlanJson; compose?: string; error?: string; status?: Status } = {}) => {
    const s = json(id);
    const events = listStackEvents(db, id, 0).slice(-EVENTS_SHOWN).reverse();
    const manage = may(c, 'POST /stacks/:id/update');
    return render(
      c,
      <Layout title={`Stack ${s.name}`} csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={o.error} refresh={o.plan ? 0 : 5}>
        <p>
          <a href="/stacks">All stacks</a> · owner {s.owner} · configuration version {s.config_version}
          {s.owner !== 'rest' && <> · declared by the {s.owner} manifests: change it there</>}
        </p>
        {may(c, 'POST /stacks/:id/deploy') && (
          <div class="actions">
            <PostButton action={`/stacks/${id}/deploy`} csrf={c.var.csrf} label="Deploy" context={`stack ${s.name}`} />
            <PostButton action={`/stacks/${id}/rollback`} csrf={c.var.csrf} label="Rollback" context={`stack ${s.name}`} tone="secondary" />
          </div>
        )}
        <h2>Services</h2>
        <ServicesOfStack stack={s} terminal={mayOpenTerminal(c.var.user)} />
        <h2>Last deploy</h2>
        {s.last_deploy ? <StackDeployView deploy={s.last_deploy} /> : <p class="muted">Not deployed yet.</p>}
        <h2>Events</h2>
        <StackEvents events={events} />
        <h2>Variables</h2>
        <ListTable
          caption="Variables"
          columns={manage ? ['Key', 'Value', 'Flags', ''] : ['Key', 'Value', 'Flags']}
          empty="No variables."
          rows={s.variables.map((v) => (
            <tr>
              <td class="mono">{v.key}</td>
              <td class="mono">{v.is_secret ? <span class="muted">secret</span> : v.value}</td>
              <td>{[v.is_secret && 'secret', v.required && 'required'].filter(Boolean).join(', ') || '-'}</td>
              {manage && (
                <td>
                  <PostButton action={`/stacks/${id}/variables/${v.key}/delete`} csrf={c.var.csrf} label="Delete" context={v.key} tone="secondary" small />
                </td>
              )}
            </tr>
          ))}
        />
        {manage && (
          <form method="post" action={`/stacks/${id}/variables`} class="stack">
            <Csrf token={c.var.csrf} />
            <div class="row">
              <Field label="Key" name="key" required />
              <Field label="Value" name="value" />
            </div>
            <Check label="Secret" name="is_secret" />
            <div>
              <button type="submit">Set variable</button> <span class="muted">The services that use it are deployed again.</span>
            </div>
          </form>
        )}
        {manage && (
          <>
            <h2>Compose file</h2>
            <ComposeForm action={`/stacks/${id}/update`} csrf={c.var.csrf} v={{ compose: o.compose ?? s.compose ?? '' }} create={false} planned={o.plan?.ok ?? false} submit="Save and deploy" />
            {o.plan && <PlanTable plan={o.plan} />}
            <h2>Danger zone</h2>
            <p>
              <a class="button danger" href={`/stacks/${id}/delete`}>
                Delete stack
              </a>
            </p>
          </>
        )}
      </Layout>,
      o.status ?? 200,
    );
  };

  /** A form action on stack `id`: success redirects to the stack page; a refusal shows it with the reason. */
  const action = (run: (c: Context<UiEnv>, id: number, form: Form) => string) => async (c: Context<UiEnv>) => {
    const id = idParam(c, 'id', 'stack');
    const form = await readForm(c, deps);
    try {
      return done(c, `/stacks/${id}`, run(c, id, form));
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) === 500 || !getStack(db, id)) throw err;
      return page(c, id, { error: formError(err), status: statusOf(err) });
    }
  };

  r.get('/stacks/:id', (c) => page(c, idParam(c, 'id', 'stack')));

  r.post('/stacks/:id/update', async (c) => {
    const id = idParam(c, 'id', 'stack');
    const form = await readForm(c, deps);
    const dryRun = form.intent !== 'apply';
    try {
      const result = updateStack(deps, id, { compose: form.compose ?? '' }, 'ui', { dryRun, changedBy: c.var.user.username });
      if (dryRun) return page(c, id, { plan: stackPlanJson(result.plan), compose: form.compose });
      return done(c, `/stacks/${id}`, 'stack_saved');
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) === 500 || !getStack(db, id)) throw err;
      return page(c, id, { error: formError(err), status: statusOf(err), plan: planOfError(err), compose: form.compose });
    }
  });

  r.post('/stacks/:id/deploy', action((c, id) => {
    deployStack(deps, id, {}, 'ui');
    return 'stack_deploy_queued';
  }));

  r.post('/stacks/:id/rollback', action((c, id) => {
    rollbackStack(deps, id, 'ui');
    return 'stack_deploy_queued';
  }));

  /** The stack's variable list as the update command takes it (stored values kept: none is sent back). */
  const storedList = (id: number) => listStackVars(db, id).map((v) => ({ key: v.key, is_secret: v.isSecret, required: v.required }));

  r.post('/stacks/:id/variables', action((c, id, f) => {
    const key = (f.key ?? '').trim();
    const rest = storedList(id).filter((v) => v.key !== key);
    updateStack(deps, id, { variables: [...rest, { key, value: f.value ?? '', is_secret: checked(f, 'is_secret') }] }, 'ui', { changedBy: c.var.user.username });
    return 'stack_saved';
  }));

  r.post('/stacks/:id/variables/:key/delete', action((c, id) => {
    const key = envKeySchema.safeParse(c.req.param('key'));
    if (!key.success) throw notFound('stack variable');
    const list = storedList(id);
    if (!list.some((v) => v.key === key.data)) throw notFound('stack variable');
    updateStack(deps, id, { variables: list.filter((v) => v.key !== key.data) }, 'ui', { changedBy: c.var.user.username });
    return 'stack_saved';
  }));

  r.get('/stacks/:id/delete', (c) => {
    const s = json(idParam(c, 'id', 'stack'));
    return render(
      c,
      <Layout title={`Delete stack ${s.name}?`} csrf={c.var.csrf} user={c.var.user}>
        <p>
          This stops and removes the containers, networks and routes of its {s.services.length} services ({s.services.map((x) => x.service).join(', ') || 'none'}) and its deploy
          history. Its named volumes are kept unless you tick the box.
        </p>
        <form method="post" action={`/stacks/${s.id}/delete`} class="stack">
          <Csrf token={c.var.csrf} />
          <Check label="Also delete its volumes (cannot be undone)" name="purge" />
          <div class="actions">
            <button type="submit" class="danger">
              Delete stack
            </button>
            <a href={`/stacks/${s.id}`}>Cancel</a>
          </div>
        </form>
      </Layout>,
    );
  });

  r.post('/stacks/:id/delete', async (c) => {
    const id = idParam(c, 'id', 'stack');
    const form = await readForm(c, deps);
    deleteStack(deps, id, 'ui', { purge: checked(form, 'purge') });
    return done(c, '/stacks', 'stack_deleted');
  });

  // --- templates ---

  r.get('/templates', (c) => {
    const list = listTemplates();
    const deploy = may(c, 'POST /templates/:name');
    return render(
      c,
      <Layout title="Templates" csrf={c.var.csrf} user={c.var.user}>
        <p>
          One-click stacks of what small teams self-host: images pinned to a version, health-checked, their state on volumes. <a href="/stacks">All stacks</a>
        </p>
        <ListTable
          caption="Templates"
          columns={['Template', 'Category', 'Services', 'What it is']}
          empty="No templates ship with this svc."
          rows={list.map((t) => (
            <tr>
              <td>{deploy ? <a href={`/templates/${t.name}`}>{t.title}</a> : t.title}</td>
              <td>{t.category}</td>
              <td class="mono">{t.services.join(', ')}</td>
              <td>{t.description}</td>
            </tr>
          ))}
        />
      </Layout>,
    );
  });

  const templateOf = (c: Context): StackTemplate => {
    const t = findTemplate(c.req.param('name') ?? '');
    if (!t) throw notFound('template');
    return t;
  };

  const templatePage = (c: Context<UiEnv>, t: StackTemplate, f: Form, o: { plan?: PlanJson; error?: string; status?: Status } = {}) =>
    render(
      c,
      <Layout title={`New ${t.title} stack`} csrf={c.var.csrf} user={c.var.user} error={o.error}>
        <p>
          {t.description} {t.website && <a href={t.website}>{t.website}</a>}
        </p>
        <p>
          Services: <span class="mono">{t.services.join(', ')}</span>.{' '}
          {t.generated.length > 0 && <>svc generates {t.generated.map((g) => g.name).join(', ')} and stores them as secret variables.</>}
        </p>
        <form method="post" action={`/templates/${t.name}`} class="stack">
          <Csrf token={c.var.csrf} />
          <Field label="Name" name="name" value={f.name ?? t.name} required hint="the stack's name; its services become apps <name>-<service>" />
          {t.inputs.map((i) => (
            <Field
              label={i.title}
              name={`input_${i.name}`}
              value={f[`input_${i.name}`] ?? i.default}
              type={i.kind === 'secret' ? 'password' : i.kind === 'email' ? 'email' : 'text'}
              required={i.required && i.default === undefined}
              hint={i.description}
            />
          ))}
          <div class="actions">
            <button type="submit" name="intent" value="plan" class={o.plan?.ok ? 'secondary' : undefined}>
              Plan
            </button>
            {o.plan?.ok && (
              <button type="submit" name="intent" value="apply">
                Create stack
              </button>
            )}
          </div>
        </form>
        {o.plan && <PlanTable plan={o.plan} />}
      </Layout>,
      o.status ?? 200,
    );

  r.get('/templates/:name', (c) => templatePage(c, templateOf(c), {}));
  r.post('/templates/:name', async (c) => {
    const t = templateOf(c);
    const form = await readForm(c, deps);
    const inputs = Object.fromEntries(t.inputs.map((i) => [i.name, form[`input_${i.name}`] ?? '']));
    const dryRun = form.intent !== 'apply';
    try {
      const result = createStackFromTemplate(deps, t.name, { name: text(form, 'name') ?? t.name, inputs }, 'ui', { dryRun, changedBy: c.var.user.username });
      if (dryRun) return templatePage(c, t, form, { plan: stackPlanJson(result.plan) });
      return done(c, `/stacks/${result.stack.id}`, 'stack_created');
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) === 500) throw err;
      return templatePage(c, t, form, { error: formError(err), status: statusOf(err), plan: planOfError(err) });
    }
  });

  return r;
}
