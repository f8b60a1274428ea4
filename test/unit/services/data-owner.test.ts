// Who a managed service's data directory belongs to, from its image's Config.User (issue 35): a table.
import { describe, expect, it } from 'vitest';
import { dataDirOwner } from '../../../src/reconcilers/service/data-owner.js';

describe('dataDirOwner', () => {
  it.each<[string | undefined, ReturnType<typeof dataDirOwner>]>([
    [undefined, undefined], // unset: root, as the official images (they chown the directory themselves)
    ['', undefined],
    ['root', undefined],
    ['0', undefined],
    ['0:0', undefined],
    ['root:root', undefined],
    ['00', undefined],
    ['1001', { uid: 1001, gid: 0, mode: 0o700 }], // bitnami's: uid 1001, group 0
    ['1001:1001', { uid: 1001, gid: 1001, mode: 0o700 }],
    [' 999:999 ', { uid: 999, gid: 999, mode: 0o700 }],
    ['1001:', { uid: 1001, gid: 0, mode: 0o700 }],
    ['1001:staff', { uid: 1001, gid: undefined, mode: 0o700 }], // a named group: the directory keeps its group
    ['redis', { uid: undefined, gid: undefined, mode: 0o777 }], // a name svc does not resolve: opened inside the 700 data dir
    ['postgres:postgres', { uid: undefined, gid: undefined, mode: 0o777 }],
  ])('%j -> %j', (user, want) => {
    expect(dataDirOwner(user)).toEqual(want);
  });
});
