// `svc volumes APP` (issue 22): the volumes and the deploy strategy come from the app's record, not from
// the by-name lookup (which answers only id and name, so the command used to print "no volumes" always).
import { describe, expect, it } from 'vitest';
import { volumesCommand } from '../../../src/cli/jobs.js';
import { recordingClient } from './recording-client.js';

describe('svc volumes', () => {
  it("prints the app's volumes and deploy strategy from GET /api/apps/{id}", async () => {
    const { client, calls } = recordingClient({
      'GET /api/app-names/shop': { id: 7, name: 'shop' },
      'GET /api/apps/7': { id: 7, name: 'shop', volumes: [{ name: 'data', mount_path: '/data' }, { name: 'uploads', mount_path: '/srv/up' }], deploy_strategy: 'stop_first', drain_seconds: 120 },
    });
    let out = '';
    expect(await volumesCommand(client, { app: 'shop' }, (s) => (out += s))).toBe(0);
    expect(out).toBe('VOLUME   MOUNT PATH\ndata     /data\nuploads  /srv/up\ndeploy strategy: stop_first\ndrain: 120 s\n');
    expect(calls).toEqual(['GET /api/app-names/shop', 'GET /api/apps/7']);
  });

  it('says so when the app has none', async () => {
    const { client } = recordingClient({ 'GET /api/app-names/web': { id: 1, name: 'web' }, 'GET /api/apps/1': { id: 1, volumes: [], deploy_strategy: 'blue_green' } });
    let out = '';
    await volumesCommand(client, { app: 'web' }, (s) => (out += s));
    expect(out).toBe('no volumes\ndeploy strategy: blue_green\ndrain: 30 s\n');
  });
});
