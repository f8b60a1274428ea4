// The stack pages (issue 32) through the real hono app, store and Compose loader: paste a file, see its
// plan before anything is written, create, see the services with the way to their logs/terminal/metrics,
// plan and save a change, set a variable, delete; deploy a template from the catalog.
import { describe, expect, it } from 'vitest';
import { loadCompose } from '../../../src/stacks/compose/load.js';
import { listStacks, listStackVars, stackApps } from '../../../src/store/stacks.js';
import { createTestApi } from '../../support/api.js';
import { dbRows } from '../../support/db-snapshot.js';
import { formClient, roleText } from './form-client.js';

const COMPOSE = `services:
  web:
    image: nginx:1.27-alpine
    environment:
      GREETING: \${GREETING:-hi}
    depends_on:
      db:
        condition: service_healthy
    x-svc:
      domain: shop.example.com
      port: 80
  db:
    image: postgres:16.6-alpine
    environment:
      POSTGRES_PASSWORD: \${PW}
    volumes:
      - data:/var/lib/postgresql/data
    healthcheck:
      test: ["CMD-SHELL", "pg_isready"]
volumes:
  data:
`;

async function signedIn() {
  const t = createTestApi({ loadCompose });
  const { cookie } = await t.login();
  const b = formClient(t.app);
  b.jar.set('session', cookie);
  return { t, b };
}

describe('stack pages', () => {
  it('plans a pasted file without writing, creates it, shows its services, plans and saves a change, deletes it', async () => {
    const { t, b } = await signedIn();
    const list = await b.get('/stacks');
    expect(list.status).toBe(200);
    expect(list.html).toContain('No stacks yet.');
    expect(list.html).toContain('href="/stacks/new"');
    expect(list.html).toContain('href="/templates"');

    const form = await b.get('/stacks/new');
    expect(form.html).toContain('<label for="f-compose">Compose file</label>');
    // Before a plan there is no create button: the plan is always seen first.
    expect(form.html).not.toContain('Create stack</button>');

    const { audit_log: _a, ...before } = dbRows(t.db);
    const planned = await b.post('/stacks/new', { name: 'shop', compose: COMPOSE, secrets: 'PW=s3cret', intent: 'plan' });
    expect(planned.status).toBe(200);
    expect(planned.html).toContain('aria-label="Plan"');
    expect(planned.html).toMatch(/db <span class="muted mono">shop-db<\/span>/);
    expect(planned.html).toContain('stopped first (it keeps state)');
    expect(planned.html).toContain('Create stack</button>');
    const { audit_log: _b, ...after } = dbRows(t.db);
    expect(after).toEqual(before);

    const refused = await b.post('/stacks/new', { name: 'bad', compose: 'services:\n  web:\n    image: nginx:1.27\n    privileged: true\n', intent: 'plan' });
    expect(refused.html).toMatch(/<code>privileged<\/code>/);
    expect(refused.html).not.toContain('Create stack</button>');

    const created = await b.post('/stacks/new', { name: 'shop', compose: COMPOSE, secrets: 'PW=s3cret', variables: 'GREETING=hello', intent: 'apply' });
    const stack = listStacks(t.db)[0]!;
    expect(created.location).toBe(`/stacks/${stack.id}?m=stack_created`);
    expect(listStackVars(t.db, stack.id).map((v) => [v.key, v.isSecret])).toEqual([['GREETING', false], ['PW', true]]);
    const page = await b.follow(created);
    expect(roleText(page.html, 'status')).toMatch(/Stack created/);
    const apps = stackApps(t.db, stack.id);
    expect(apps.map((a) => a.name)).toEqual(['shop-db', 'shop-web']);
    for (const a of apps) {
      expect(page.html).toContain(`href="/apps/${a.id}/logs#newest"`);
      expect(page.html).toContain(`href="/apps/${a.id}/terminal"`);
      expect(page.html).toContain(`href="/apps/${a.id}#metrics"`);
    }
    expect(page.html).toContain('https://shop.example.com -&gt; :80');
    expect(page.html).not.toContain('s3cret');
    expect(page.html).toContain('>Deploy<span class="sr"> stack shop</span></button>');

    // The dashboard lists the stack, not its service apps.
    const dash = await b.get('/');
    expect(dash.html).toContain(`href="/stacks/${stack.id}"`);
    expect(dash.html).not.toContain(`<a href="/apps/${apps[0]!.id}">shop-db</a>`);

    const changed = COMPOSE.replace('nginx:1.27-alpine', 'nginx:1.28-alpine');
    const plan = await b.post(`/stacks/${stack.id}/update`, { compose: changed, intent: 'plan' });
    expect(plan.html).toContain('Save and deploy</button>');
    expect(plan.html).toContain('aria-label="Plan"');
    const saved = await b.post(`/stacks/${stack.id}/update`, { compose: changed, intent: 'apply' });
    expect(saved.location).toBe(`/stacks/${stack.id}?m=stack_saved`);
    expect(listStacks(t.db)[0]!.compose).toContain('nginx:1.28-alpine');

    const set = await b.post(`/stacks/${stack.id}/variables`, { key: 'GREETING', value: 'hey' });
    expect(set.location).toBe(`/stacks/${stack.id}?m=stack_saved`);
    expect(listStackVars(t.db, stack.id).find((v) => v.key === 'GREETING')!.value).toBe('hey');
    // The secret kept its value: the form never sends it back.
    expect((await t.request('GET', `/api/stacks/${stack.id}/variables/PW/reveal`)).body.value).toBe('s3cret');

    const ask = await b.get(`/stacks/${stack.id}/delete`);
    expect(ask.html).toContain('Also delete its volumes');
    const gone = await b.post(`/stacks/${stack.id}/delete`, {});
    expect(gone.location).toBe('/stacks?m=stack_deleted');
    expect(listStacks(t.db)).toEqual([]);
  });

  it('deploys a template: inputs asked, plan first, generated values stored as secrets', async () => {
    const { t, b } = await signedIn();
    const list = await b.get('/templates');
    expect(list.html).toContain('href="/templates/umami"');
    const form = await b.get('/templates/umami');
    expect(form.html).toContain('name="input_DOMAIN"');
    const missing = await b.post('/templates/umami', { name: 'umami', input_DOMAIN: '', intent: 'plan' });
    expect(missing.status).toBe(400);
    expect(roleText(missing.html, 'alert')).toMatch(/DOMAIN/);
    const planned = await b.post('/templates/umami', { name: 'umami', input_DOMAIN: 'stats.example.com', intent: 'plan' });
    expect(planned.status).toBe(200);
    expect(planned.html).toContain('Create stack</button>');
    expect(listStacks(t.db)).toEqual([]);
    const created = await b.post('/templates/umami', { name: 'umami', input_DOMAIN: 'stats.example.com', intent: 'apply' });
    const stack = listStacks(t.db)[0]!;
    expect(created.location).toBe(`/stacks/${stack.id}?m=stack_created`);
    const vars = listStackVars(t.db, stack.id);
    expect(vars.map((v) => [v.key, v.isSecret])).toEqual([['APP_SECRET', true], ['DOMAIN', false], ['POSTGRES_PASSWORD', true]]);
    expect(vars.find((v) => v.key === 'DOMAIN')!.value).toBe('stats.example.com');
  });

  it('offers a viewer no form', async () => {
    const { t, b } = await signedIn();
    await t.request('POST', '/api/stacks', { name: 'shop', compose: COMPOSE, variables: [{ key: 'PW', value: 'x', is_secret: true }] });
    const viewer = formClient(t.app);
    viewer.jar.set('session', (await t.login('u-viewer', 'viewer', null)).cookie);
    const page = await viewer.get(`/stacks/${listStacks(t.db)[0]!.id}`);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('Deploy</button>');
    expect(page.html).not.toContain('Compose file');
    expect((await viewer.get('/stacks/new')).status).toBe(403);
    void b;
  });
});
