import { describe, expect, it } from 'vitest';
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
