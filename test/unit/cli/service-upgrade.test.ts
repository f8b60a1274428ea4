// `svc services upgrade NAME VERSION | --revert | --confirm` (issue 33 section 2): the request, then the
// upgrade's events as they come, until it switched or failed; exit 1 when it failed.
import { describe, expect, it } from 'vitest';
import { serviceUpgradeCommand } from '../../../src/cli/service-upgrade.js';
import { recordingClient } from './recording-client.js';

const up = (o: Record<string, unknown> = {}) => ({ id: 4, from_version: '15', to_version: '17', status: 'running', step: 'backup', error: null, keep_days: 7, ...o });
const ev = (id: number, kind: string, message: string, upgrade_id = 4) => ({ id, upgrade_id, kind, message, created_at: `2026-01-01T10:00:0${id}Z` });

/** Answers that advance one poll at a time: each GET of the upgrades gives the next state. */
function steps(states: Record<string, unknown>[], events: ReturnType<typeof ev>[][]) {
  let i = 0;
  return {
    'GET /api/services': [{ id: 9, name: 'db', version: '15' }],
    'GET /api/services/9/events': () => events[Math.min(i, events.length - 1)],
    'GET /api/services/9/upgrades': () => [states[Math.min(i++, states.length - 1)]],
  };
}

describe('svc services upgrade', () => {
  it('starts the upgrade and prints each event once, oldest first, until it switched', async () => {
    const e1 = [ev(1, 'upgrade_requested', 'asked for'), ev(0, 'restarted', 'not this upgrade', 3)];
    const e2 = [ev(2, 'upgrade_backup', 'backup written'), ...e1];
    const e3 = [ev(3, 'upgrade_switched', 'db is served by db-v17'), ...e2];
    const { client, calls } = recordingClient({ ...steps([up(), up({ step: 'move' }), up({ status: 'switched', step: 'kept' })], [e1, e2, e3]), 'POST /api/services/9/upgrade': up() });
    let out = '';
    expect(await serviceUpgradeCommand(client, { name: 'db', version: '17', keepDays: 3, pollMs: 0 }, (s) => (out += s))).toBe(0);
    expect(calls[1]).toBe('POST /api/services/9/upgrade {"version":"17","keep_days":3}');
    expect(out.split('\n')).toEqual([
      'upgrade 4 of db from 15 to 17 started: backup, new container, move (writes refused, reads served), verify, switch',
      '10:00:01 requested: asked for',
      '10:00:02 backup: backup written',
      '10:00:03 switched: db is served by db-v17',
      'db runs 17; 15 is kept 7 days: svc services upgrade db --confirm drops it, --revert goes back',
      '',
    ]);
  });

  it('a failed upgrade exits 1 with its reason', async () => {
    const { client } = recordingClient({ ...steps([up({ status: 'failed', step: 'done', error: 'verification found 1 difference(s)' })], [[]]), 'POST /api/services/9/upgrade': up() });
    let out = '';
    expect(await serviceUpgradeCommand(client, { name: 'db', version: '17', pollMs: 0 }, (s) => (out += s))).toBe(1);
    expect(out).toContain('the upgrade failed and was rolled back; db stays at 15: verification found 1 difference(s)');
  });

  it.each([
    ['revert', 'reverted', 'revert of db to 15 asked for: what was written on 17 since the switch is lost'],
    ['confirm', 'confirmed', 'confirm of db at 17 asked for: the kept 15 and its data are removed'],
  ] as const)('--%s asks for it and waits until it is %s', async (what, status, said) => {
    const states = [up({ status: 'switched', step: 'kept', request: what }), up({ status, step: 'done' })];
    const { client, calls } = recordingClient({ ...steps(states, [[]]), [`POST /api/services/9/upgrade/${what}`]: up({ status: 'switched', step: 'kept' }) });
    let out = '';
    expect(await serviceUpgradeCommand(client, { name: 'db', [what]: true, pollMs: 0 }, (s) => (out += s))).toBe(0);
    expect(calls).toContain(`POST /api/services/9/upgrade/${what}`);
    expect(out).toContain(said);
  });

  it('an unknown service is a one-line error; --no-wait returns after the request', async () => {
    const { client } = recordingClient({ 'GET /api/services': [] });
    await expect(serviceUpgradeCommand(client, { name: 'nope', version: '17' })).rejects.toThrow('no service named nope');
    const r = recordingClient({ 'GET /api/services': [{ id: 9, name: 'db', version: '15' }], 'POST /api/services/9/upgrade': up() });
    expect(await serviceUpgradeCommand(r.client, { name: 'db', version: '17', noWait: true }, () => {})).toBe(0);
    expect(r.calls).toHaveLength(2);
  });
});
