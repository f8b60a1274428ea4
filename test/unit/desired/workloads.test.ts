import { describe, expect, it } from 'vitest';
import { memoryDb, recordingEnqueue } from '../../support/db.js';
import { commandCtx } from '../../support/commands.js';
import { createApp } from '../../../src/desired/apps.js';
import { getAppByName } from '../../../src/store/apps.js';
import type { DomainError } from '../../../src/errors.js';
import { commandSchema, jobsSchema, mountPathProblem, scheduleProblem, volumesSchema, canonicalVolumes } from '../../../src/desired/workload-fields.js';

describe('volume fields', () => {
  it.each(['/data', '/var/lib/app', '/a-b_c.d'])('accepts %s', (p) => expect(mountPathProblem(p)).toBeUndefined());
  it.each(['data', '/', '/data/', '/a/../b', '/a/./b', '//a', '/a:b', '/a,b', '/a\nb'])('refuses %j', (p) => expect(mountPathProblem(p)).toBeDefined());

  it('refuses duplicate names, duplicate or nested mount paths, bad names', () => {
    expect(volumesSchema.safeParse([{ name: 'a', mount_path: '/x' }, { name: 'a', mount_path: '/y' }]).success).toBe(false);
    expect(volumesSchema.safeParse([{ name: 'a', mount_path: '/x' }, { name: 'b', mount_path: '/x' }]).success).toBe(false);
    expect(volumesSchema.safeParse([{ name: 'a', mount_path: '/x' }, { name: 'b', mount_path: '/x/y' }]).success).toBe(false);
    expect(volumesSchema.safeParse([{ name: '../etc', mount_path: '/x' }]).success).toBe(false);
    expect(volumesSchema.safeParse([{ name: 'b', mount_path: '/y' }, { name: 'a', mount_path: '/x' }]).success).toBe(true);
  });

  it('stores a canonical text (sorted by name), so equal lists compare equal', () => {
    expect(canonicalVolumes([{ name: 'b', mount_path: '/y' }, { name: 'a', mount_path: '/x' }])).toBe('[{"name":"a","mount_path":"/x"},{"name":"b","mount_path":"/y"}]');
  });
});

describe('job fields', () => {
  it.each(['*/5 * * * *', '0 3 * * 1-5', '@daily', '@hourly'])('accepts the schedule %s', (s) => expect(scheduleProblem(s)).toBeUndefined());
  it.each(['* * *', '* * * * * *', '61 * * * *', 'every day', ''])('refuses the schedule %j', (s) => expect(scheduleProblem(s)).toBeDefined());

  it('commands: a non-blank string or a non-empty argument array, no NUL', () => {
    expect(commandSchema.safeParse('echo hi').success).toBe(true);
    expect(commandSchema.safeParse(['echo', 'hi']).success).toBe(true);
    for (const bad of ['', '   ', [], [''], ['a\0b'], 'a\0b', 42]) expect(commandSchema.safeParse(bad).success).toBe(false);
  });

  it('defaults timeout and concurrency; refuses duplicate names and unknown fields', () => {
    const ok = jobsSchema.parse([{ name: 'j', schedule: '@daily', command: 'x' }]);
    expect(ok[0]).toMatchObject({ timeout_seconds: 3600, concurrency: 'forbid' });
    expect(jobsSchema.safeParse([{ name: 'j', schedule: '@daily', command: 'x' }, { name: 'j', schedule: '@daily', command: 'y' }]).success).toBe(false);
    expect(jobsSchema.safeParse([{ name: 'j', schedule: '@daily', command: 'x', shell: true }]).success).toBe(false);
    expect(jobsSchema.safeParse([{ name: 'j', schedule: '@daily', command: 'x', concurrency: 'queue' }]).success).toBe(false);
  });
});

describe('apps command: volumes, strategy and jobs', () => {
  const setup = () => {
    const db = memoryDb();
    return { db, ctx: commandCtx(db, { enqueue: recordingEnqueue() }) };
  };
  const issues = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return ((err as DomainError).details?.issues as { path: string }[]).map((i) => i.path);
    }
    throw new Error('no error');
  };

  it('stores the lists canonically and shows them parsed; a job gets its defaults', () => {
    const { ctx, db } = setup();
    const row = createApp(ctx, {
      name: 'web', fallback_port: 9100, deploy_strategy: 'stop_first',
      volumes: [{ name: 'b', mount_path: '/b' }, { name: 'a', mount_path: '/a' }],
      jobs: [{ name: 'nightly', schedule: '0 3 * * *', command: ['rake', 'cleanup'] }],
    }, 'api');
    expect(row.volumes).toBe('[{"name":"a","mount_path":"/a"},{"name":"b","mount_path":"/b"}]');
    expect(JSON.parse(getAppByName(db, 'web')!.jobs)).toEqual([{ name: 'nightly', schedule: '0 3 * * *', command: ['rake', 'cleanup'], timeout_seconds: 3600, concurrency: 'forbid' }]);
  });

  it('refuses stop_first with more than one replica, and volumes or jobs on an external_service', () => {
    const { ctx } = setup();
    expect(issues(() => createApp(ctx, { name: 'a', fallback_port: 9101, deploy_strategy: 'stop_first', replicas: 2 }, 'api'))).toEqual(['deploy_strategy']);
    expect(issues(() => createApp(ctx, { name: 'b', fallback_port: 9102, app_type: 'external_service', source: 'http://x.example', volumes: [{ name: 'v', mount_path: '/v' }] }, 'api'))).toEqual(['volumes']);
    expect(issues(() => createApp(ctx, { name: 'c', fallback_port: 9103, volumes: [{ name: 'v', mount_path: '/' }] }, 'api'))).toEqual(['volumes.0.mount_path']);
  });
});
