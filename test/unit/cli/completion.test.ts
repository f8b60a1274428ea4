// The completion scripts come from the CLI's own tables: every command of the usage table and every flag
// of the options table is in each script, actions and app-taking commands are read from the usage lines,
// and the bash script completes in a real bash.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { COMMANDS } from '../../../src/cli/usage.js';
import { OPTIONS, flagsOf } from '../../../src/cli/options.js';
import { commandSpecs, completionScript, specOf } from '../../../src/cli/completion.js';

const bash = (script: string, words: string[], stub = '') =>
  execFileSync('bash', ['-c', `${stub}\n${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

describe('svc completion', () => {
  it('every command of the usage table has its flags in the options table, and the other way round', () => {
    expect(Object.keys(OPTIONS).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it('reads actions and app arguments from the usage lines', () => {
    expect(specOf('backup', COMMANDS.backup)).toMatchObject({ actions: ['create', 'list', 'download'], takesApp: false });
    expect(specOf('nodes', COMMANDS.nodes).actions).toEqual(['list', 'events', 'join', 'drain', 'activate', 'label']);
    expect(specOf('notify', COMMANDS.notify).actions).toEqual(['list', 'add', 'test', 'rm', 'log']);
    expect(specOf('completion', COMMANDS.completion).actions).toEqual(['bash', 'zsh', 'fish']);
    expect(specOf('restore', COMMANDS.restore).actions).toEqual([]);
    expect(specOf('apps', COMMANDS.apps)).toMatchObject({ actions: [], takesApp: false });
    const withApp = commandSpecs().filter((s) => s.takesApp).map((s) => s.name).sort();
    expect(withApp).toEqual(['deploy', 'deploys', 'exec', 'jobs', 'logs', 'previews', 'repo', 'run', 'volumes']);
  });

  it('each script names every command and every flag', () => {
    for (const shell of ['bash', 'zsh', 'fish'] as const) {
      const script = completionScript(shell);
      for (const name of Object.keys(COMMANDS)) {
        expect(script, `${shell}: ${name}`).toMatch(new RegExp(`\\b${name}\\b`));
        for (const f of flagsOf(name)) expect(script, `${shell}: ${name} ${f}`).toContain(shell === 'fish' ? (f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`) : f);
      }
      expect(script).toContain('svc apps --names');
    }
  });

  it('bash completes commands, actions, flags and app names', () => {
    const script = completionScript('bash');
    expect(bash(script, ['svc', 'dep'])).toEqual(['deploys', 'deploy']);
    expect(bash(script, ['svc', 'backup', ''])).toEqual(['create', 'list', 'download']);
    expect(bash(script, ['svc', 'apply', '--d'])).toEqual(['--dry-run']);
    // App names come from `svc apps --names`: a stand-in `svc` function answers here.
    const stub = "svc() { [ \"$*\" = 'apps --names' ] && printf 'web\\nworker\\napi\\n'; }";
    expect(bash(script, ['svc', 'logs', 'w'], stub)).toEqual(['web', 'worker']);
    expect(bash(script, ['svc', 'logs', 'web', ''], stub)).toEqual([]);
  });
});
