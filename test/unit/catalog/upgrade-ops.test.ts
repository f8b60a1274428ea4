// Every command a guarded upgrade or a preview copy runs in a container (issue 33): secrets go through the
// environment, never argv (argv shows in `ps` and the engine's events), and the old host is an argument of
// the script, never spliced into it.
import { describe, expect, it } from 'vitest';
import { kindOf, type ExecCommand } from '../../../src/catalog/catalog.js';

const HOST = 'inst-svc-db';
const commandsOf = (type: 'postgres' | 'mysql' | 'redis') => {
  const kind = kindOf(type);
  const creds = kind.generateCredentials('db');
  const ops = kind.upgrade!;
  const all: [string, ExecCommand][] = [
    ['freeze', ops.freeze(creds)],
    ['unfreeze', ops.unfreeze(creds)],
    ['move', ops.move(creds, HOST)],
    ['databases', ops.databases(creds)],
    ['tableSums', ops.tableSums(creds, type === 'redis' ? 'db0' : 'app')],
  ];
  if (kind.copyDump) all.push(['copyDump', kind.copyDump(creds)]);
  return { creds, all };
};

describe.each(['postgres', 'mysql', 'redis'] as const)('%s upgrade and copy commands', (type) => {
  it('keep every secret out of argv and take the old host as an argument', () => {
    const { creds, all } = commandsOf(type);
    const secrets = Object.entries(creds).filter(([k]) => /password/.test(k)).map(([, v]) => v);
    expect(secrets.length).toBeGreaterThan(0);
    for (const [what, c] of all) {
      for (const s of secrets) expect(c.cmd.join(' '), `${type} ${what}`).not.toContain(s);
      expect(Object.values(c.env ?? {}).some((v) => secrets.includes(v)), `${type} ${what} authenticates through env`).toBe(true);
    }
    const move = all.find(([w]) => w === 'move')![1];
    if (move.cmd[0] === 'sh') {
      expect(move.cmd[2]).not.toContain(HOST);
      expect(move.cmd.slice(3)).toContain(HOST);
    }
  });
});
