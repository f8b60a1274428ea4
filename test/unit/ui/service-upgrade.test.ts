// The "Version" section of a service page (issue 33 section 2): the form with the plan, the steps of an
// upgrade under way, and revert (ticked first) and confirm of a switched one, through the real hono app.
import { beforeEach, describe, expect, it } from 'vitest';
import { observeService } from '../../../src/observed/services.js';
import { openUpgradeOf, updateUpgrade } from '../../../src/store/service-upgrades.js';
import { createTestApi, type TestApi } from '../../support/api.js';
import { formClient, roleText } from './form-client.js';

let t: TestApi;
let b: ReturnType<typeof formClient>;

beforeEach(async () => {
  t = createTestApi();
  const { cookie } = await t.login();
  b = formClient(t.app);
  b.jar.set('session', cookie);
});

describe('service page: version and upgrade', () => {
  it('offers the later versions with the plan, shows the steps, then revert (ticked) and confirm', async () => {
    const svc = (await t.request('POST', '/api/services', { name: 'ui-pg', type: 'postgres', version: '16' })).body;
    await b.get(`/services/${svc.id}`); // the form's CSRF token
    const early = await b.post(`/services/${svc.id}/upgrade`, { version: '17' });
    expect(early.status).toBe(409); // not active yet: said, nothing written
    expect(roleText(early.html, 'alert')).toMatch(/an upgrade starts from an active, running service/);
    observeService(t.db, svc.id, { status: 'active' });

    const page = await b.get(`/services/${svc.id}`);
    expect(page.html).toMatch(/<select id="[^"]+" name="version"[^>]*><option value="17">17<\/option><option value="18" selected="">18<\/option><\/select>/);
    expect(page.html).toContain('A backup of ui-pg is taken first.');
    expect(page.html).toContain('>Upgrade</button>');

    const started = await b.post(`/services/${svc.id}/upgrade`, { version: '17', keep_days: '3' });
    expect(started.location).toBe(`/services/${svc.id}?m=service_upgrading`);
    const u = openUpgradeOf(t.db, svc.id)!;
    expect(u).toMatchObject({ fromVersion: '16', toVersion: '17', keepDays: 3, step: 'backup' });
    const running = await b.follow(started);
    expect(running.html).toContain('Upgrading from 16 to 17: Backup of the service.');
    expect(running.html).toMatch(/<li data-step="backup" aria-current="step" class="current">/);
    expect(running.html).not.toContain('>Upgrade</button>');
    expect(running.html).not.toContain('Revert to 16');

    updateUpgrade(t.db, u.id, { status: 'switched', step: 'kept', switchedAt: '2026-01-01T00:00:00.000Z' });
    const switched = await b.get(`/services/${svc.id}`);
    expect(switched.html).toContain('Upgraded from 16 to 17. 16 is kept stopped with its data until 2026-01-04.');
    expect(switched.html).toContain('>Confirm 17</button>');
    const unticked = await b.post(`/services/${svc.id}/upgrade/revert`, {});
    expect(unticked.status).toBe(400);
    expect(openUpgradeOf(t.db, svc.id)!.request).toBeNull();
    const reverting = await b.post(`/services/${svc.id}/upgrade/revert`, { lose_writes: 'on' });
    expect(reverting.location).toBe(`/services/${svc.id}?m=service_reverting`);
    expect(openUpgradeOf(t.db, svc.id)!.request).toBe('revert');
    expect((await b.post(`/services/${svc.id}/upgrade/confirm`, {})).status).toBe(409); // a revert is under way
  });

  it('the newest version has nothing to offer', async () => {
    const svc = (await t.request('POST', '/api/services', { name: 'ui-rd', type: 'redis' })).body;
    const page = await b.get(`/services/${svc.id}`);
    expect(page.html).toContain('8 is the newest version svc offers for redis.');
    expect(page.html).not.toContain('>Upgrade</button>');
  });
});
