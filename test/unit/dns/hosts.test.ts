// The hosts directory dnsmasq reads: one file per name, written only when it changed, removed when gone.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { hostsFiles, writeHostsDir } from '../../../src/dns/hosts.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dirname(dir), { recursive: true, force: true }); // the mkdtemp parent of dns/
  dir = undefined;
});

describe('hosts files', () => {
  it('one line per app, names without the trailing dot; invalid names and addresses dropped', () => {
    const files = hostsFiles({
      'web.svc.internal.': '10.0.0.2',
      'API.svc.internal.': '10.0.0.3',
      '../etc.svc.internal.': '10.0.0.4',
      '.hidden.svc.internal.': '10.0.0.5',
      'bad.svc.internal.': '10.0.0.256',
      'v6.svc.internal.': 'fe80::1',
    });
    expect([...files]).toEqual([
      ['web.svc.internal', '10.0.0.2 web.svc.internal\n'],
      ['api.svc.internal', '10.0.0.3 api.svc.internal\n'],
    ]);
  });

  it('several addresses for one name (replicas): one line each, deduplicated, in numeric order; none valid: no file', () => {
    const files = hostsFiles({
      'web.svc.internal.': ['10.0.0.10', '10.0.0.9', '10.0.0.10', '10.0.0.300'],
      'one.svc.internal.': ['10.0.0.4'],
      'none.svc.internal.': [],
      'bad.svc.internal.': ['fe80::1', '1.2.3'],
    });
    expect([...files]).toEqual([
      ['web.svc.internal', '10.0.0.9 web.svc.internal\n10.0.0.10 web.svc.internal\n'],
      ['one.svc.internal', '10.0.0.4 one.svc.internal\n'],
    ]);
    // the same set in another order is the same file; one address as a string or a list is the same file
    expect(hostsFiles({ 'web.svc.internal.': ['10.0.0.9', '10.0.0.10'] })).toEqual(hostsFiles({ 'web.svc.internal.': ['10.0.0.10', '10.0.0.9'] }));
    expect(hostsFiles({ 'one.svc.internal.': '10.0.0.4' })).toEqual(hostsFiles({ 'one.svc.internal.': ['10.0.0.4'] }));
  });

  it('a replica more or less rewrites the file; the same set again does not', async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'svc-hosts-')), 'dns');
    await writeHostsDir(dir, { 'web.svc.internal.': ['10.0.0.2', '10.0.0.3'] });
    expect(await readFile(join(dir, 'web.svc.internal'), 'utf8')).toBe('10.0.0.2 web.svc.internal\n10.0.0.3 web.svc.internal\n');
    const ino = (await stat(join(dir, 'web.svc.internal'))).ino;
    await writeHostsDir(dir, { 'web.svc.internal.': ['10.0.0.3', '10.0.0.2'] });
    expect((await stat(join(dir, 'web.svc.internal'))).ino).toBe(ino);
    await writeHostsDir(dir, { 'web.svc.internal.': ['10.0.0.3'] });
    expect(await readFile(join(dir, 'web.svc.internal'), 'utf8')).toBe('10.0.0.3 web.svc.internal\n');
  });

  it('writes changed files atomically (mode 600), leaves unchanged ones, removes stale ones', async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'svc-hosts-')), 'dns');
    await writeHostsDir(dir, { 'web.svc.internal.': '10.0.0.2', 'api.svc.internal.': '10.0.0.3' });
    expect((await readdir(dir)).sort()).toEqual(['api.svc.internal', 'web.svc.internal']);
    expect(await readFile(join(dir, 'web.svc.internal'), 'utf8')).toBe('10.0.0.2 web.svc.internal\n');
    expect((await stat(join(dir, 'web.svc.internal'))).mode & 0o777).toBe(0o600);
    const apiIno = (await stat(join(dir, 'api.svc.internal'))).ino;

    await writeFile(join(dir, 'old.svc.internal'), '10.0.0.9 old.svc.internal\n');
    await writeHostsDir(dir, { 'web.svc.internal.': '10.0.0.7', 'api.svc.internal.': '10.0.0.3' });
    expect((await readdir(dir)).sort()).toEqual(['api.svc.internal', 'web.svc.internal']);
    expect(await readFile(join(dir, 'web.svc.internal'), 'utf8')).toBe('10.0.0.7 web.svc.internal\n');
    expect((await stat(join(dir, 'api.svc.internal'))).ino).toBe(apiIno); // not rewritten

    await writeHostsDir(dir, {});
    expect(await readdir(dir)).toEqual([]);
  });
});
