// Pages offer only the forms and buttons the signed-in user's role may use (src/ui/context.ts `may`, the
// permission table's rule of each route): an administrator sees them all, a viewer none, and the routes
// still refuse the viewer.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RULES } from '../../../src/auth/permissions.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient } from './form-client.js';

let t: TestApi;
let admin: ReturnType<typeof formClient>;
let viewer: ReturnType<typeof formClient>;
let service: number;

const client = (cookie: string) => {
  const b = formClient(t.app);
  b.jar.set('session', cookie);
  return b;
};

beforeAll(async () => {
  t = createTestApi();
  admin = client((await t.login('ada', 'owner')).cookie);
  service = (await t.request('POST', '/api/services', { name: 'db', type: 'postgres' })).body.id;
  viewer = client((await t.login('vic', 'viewer')).cookie);
});

/** Page -> what only a manager may do on it (a form's action or a link to a manager's page). */
const ACTIONS: Record<string, string[]> = {
  '/': ['class="button" href="/apps/new"', 'class="button secondary" href="/services"'],
  '/services': ['action="/services"'],
  '/services/:id': ['/stop"', '/start"', '/credentials"', '/delete"'],
  '/backups': ['action="/backups"'],
  '/backups/targets': ['action="/backups/targets"'],
  '/settings/notifications': ['action="/settings/notifications"'],
};
const path = (p: string) => p.replace(':id', String(service));

describe('actions offered by role', () => {
  it.each(Object.keys(ACTIONS))('%s: the administrator sees its actions, a viewer reads the page without them', async (p) => {
    const mine = await admin.get(path(p));
    expect(mine.status).toBe(200);
    for (const a of ACTIONS[p]) expect(mine.html, a).toContain(a);
    const theirs = await viewer.get(path(p));
    expect(theirs.status).toBe(200);
    for (const a of ACTIONS[p]) expect(theirs.html, a).not.toContain(a);
  });

  it('the routes still refuse what is not offered', async () => {
    await viewer.get('/services');
    expect((await viewer.post('/services', { name: 'x', type: 'redis' })).status).toBe(403);
    expect((await viewer.post(`/services/${service}/stop`)).status).toBe(403);
  });
});

describe('the routes pages ask about', () => {
  it('are all in the permission table (a typo would hide a form from everyone)', () => {
    const dir = join(import.meta.dirname, '../../../src/ui');
    const asked = readdirSync(dir)
      .filter((f) => f.endsWith('.tsx') || f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/\bmay\((?:c, )?'([A-Z]+ [^']+)'/g)].map((m) => m[1]!));
    expect(asked.length).toBeGreaterThan(30);
    expect(asked.filter((route) => !(route in RULES))).toEqual([]);
  });
});
