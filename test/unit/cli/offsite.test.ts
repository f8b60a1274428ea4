// `svc restore --target NAME --latest` (import the newest copy through the daemon, then restore it),
// `svc restore s3://` argument checks, and `svc target` over a recording client.
import { describe, expect, it } from 'vitest';
import { restoreCommand } from '../../../src/cli/backup.js';
import { parseS3Url } from '../../../src/cli/restore-remote.js';
import { targetCommand } from '../../../src/cli/targets.js';
import { recordingClient as recording } from './recording-client.js';


describe('svc restore from a target', () => {
  it('imports the newest copy of the named target, then restores that backup', async () => {
    const { client, calls } = recording({
      'GET /api/backup-targets': [{ id: 4, name: 'r2' }],
      'GET /api/backup-targets/4/remote': [{ key: 'svc/svc-backup-20261125-020000.tar.gz.age' }, { key: 'svc/svc-backup-20261124-020000.tar.gz.age' }],
      'POST /api/backup-targets/4/remote/import': { id: 12 },
      'POST /api/backups/12/restore': { id: 3, backup_id: 12, phase: 'completed', safety_backup_id: 13, error: null },
    });
    const out: string[] = [];
    expect(await restoreCommand(client, { target: 'r2', latest: true, pollMs: 1, write: (s) => out.push(s) })).toBe(0);
    expect(calls).toEqual([
      'GET /api/backup-targets',
      'GET /api/backup-targets/4/remote',
      'POST /api/backup-targets/4/remote/import {"key":"svc/svc-backup-20261125-020000.tar.gz.age"}',
      'POST /api/backups/12/restore?wait=false',
    ]);
    expect(out.join('')).toContain('imported as backup 12');
  });

  it('refuses what it cannot do, with the reason', async () => {
    const { client } = recording({ 'GET /api/backup-targets': [] });
    await expect(restoreCommand(client, { target: 'r2', latest: true })).rejects.toThrow('no backup target named r2');
    await expect(restoreCommand(client, { target: 'r2' })).rejects.toThrow('--target NAME --latest');
    await expect(restoreCommand(client, { file: 'x.tar.gz', latest: true })).rejects.toThrow('--latest goes with');
    expect(() => parseS3Url('s3://Bad_Bucket/k')).toThrow('not an s3:// URL');
    expect(parseS3Url('s3://svc-backups/prod/')).toEqual({ bucket: 'svc-backups', key: 'prod/' });
  });
});

describe('svc target', () => {
  it('adds with the keys from the environment (never arguments), tests and removes by name', async () => {
    const { client, calls } = recording({
      'POST /api/backup-targets': { id: 2, name: 'r2', bucket: 'b-1', prefix: 'svc/' },
      'GET /api/backup-targets': [{ id: 2, name: 'r2', endpoint: null, region: 'auto', bucket: 'b-1', prefix: 'svc/' }],
      'POST /api/backup-targets/2/test': { ok: true, duration_ms: 12 },
      'DELETE /api/backup-targets/2': undefined,
    });
    const out: string[] = [];
    const env = { ...process.env };
    process.env.AWS_ACCESS_KEY_ID = 'AK1';
    process.env.AWS_SECRET_ACCESS_KEY = 'SK1';
    try {
      await targetCommand(client, { action: 'add', name: 'r2', bucket: 'b-1', prefix: 'svc/', region: 'auto' }, (s) => out.push(s));
    } finally {
      process.env = env;
    }
    await targetCommand(client, { action: 'test', name: 'r2' }, (s) => out.push(s));
    await targetCommand(client, { action: 'list' }, (s) => out.push(s));
    await targetCommand(client, { action: 'remove', name: 'r2' }, (s) => out.push(s));
    expect(calls[0]).toBe('POST /api/backup-targets {"name":"r2","bucket":"b-1","endpoint":null,"region":"auto","prefix":"svc/","access_key":"AK1","secret_key":"SK1"}');
    expect(out.join('')).toMatch(/wrote, read back and deleted a test object in 12 ms[\s\S]*r2 +\(AWS\) +auto +b-1 +svc\/[\s\S]*removed/);
  });
});
