// `svc completion bash|zsh|fish`: shell completion scripts generated from the CLI's own tables (usage.ts for
// the commands and their actions, options.ts for the flags), so a command or flag cannot be missing from
// them. App names come from the daemon when the user presses Tab: the scripts run `svc apps --names`
// (errors hidden: no login, no daemon, no names). Completion is by position, kept simple: word 1 is a
// command; word 2 an app name (commands whose usage reads `svc CMD APP`) or an action (`svc backup list`);
// a word starting with `-` a flag of that command; anything else the shell's default (files).
import { COMMANDS } from './usage.js';
import { flagsOf } from './options.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CommandSpec {
  name: string;
  about: string;
  flags: string[];
  /** Its first argument is an app's name. */
  takesApp: boolean;
  /** Its first argument is one of these words (`create`, `list`, ...). */
  actions: string[];
}

/** Pure: the alternatives of a usage line at bracket depth 0 (`a | b [c | d] | e` -> `a`, `b [c | d]`, `e`). */
function alternatives(usage: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of usage) {
    if (ch === '[' || ch === '(') depth++;
    if (ch === ']' || ch === ')') depth--;
    if (ch === '|' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  return [...out, cur.trim()];
}

/** Pure: what a command's usage says its first argument is. */
export function specOf(name: string, c: { usage: string; about: string }): CommandSpec {
  let rest = c.usage.slice(`svc ${name}`.length).trim();
  // `svc nodes [list | events | ...] [--json]`: the optional action list.
  const bracket = /^\[([^[\]]*(?:\[[^\]]*\][^[\]]*)*)\]/.exec(rest);
  if (bracket && bracket[1].includes('|')) rest = bracket[1];
  const alts = alternatives(rest);
  const actions = alts.length > 1 ? alts.map((a) => a.split(/\s+/)[0]).filter((w) => /^[a-z][a-z0-9-]*$/.test(w)) : [];
  return { name, about: c.about, flags: flagsOf(name), takesApp: /^APP\b/.test(rest), actions };
}

/** Every command of the usage table, as the completion scripts see it. */
export const commandSpecs = (): CommandSpec[] => Object.entries(COMMANDS).map(([name, c]) => specOf(name, c));

const shortAbout = (about: string) => {
  const first = about.split(/[;:(]/)[0].trim();
  return first.length > 70 ? `${first.slice(0, 67)}...` : first;
};
/** A word list for a shell's single quotes: our words are [a-z0-9-] only, checked here. */
const words = (list: string[]) => {
  for (const w of list) if (!/^-{0,2}[a-z0-9][a-z0-9-]*$/.test(w)) throw new Error(`not a completion word: ${w}`);
  return list.join(' ');
};
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const fishSq = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function bash(specs: CommandSpec[]): string {
  const flagCases = specs.map((s) => `    ${s.name}) words=${sq(words(s.flags))} ;;`).join('\n');
  const argCases = specs
    .filter((s) => s.takesApp || s.actions.length)
    .map((s) => `    ${s.name}) ${s.takesApp ? 'words="$(svc apps --names 2>/dev/null)"' : `words=${sq(words(s.actions))}`} ;;`)
    .join('\n');
  return `# bash completion for svc (svc completion bash): source <(svc completion bash)
_svc() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=\${COMP_WORDS[1]} words=
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W ${sq(words(specs.map((s) => s.name)))} -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
${flagCases}
    esac
  elif [ "$COMP_CWORD" -eq 2 ]; then
    case $cmd in
${argCases}
    esac
  fi
  [ -n "$words" ] && COMPREPLY=($(compgen -W "$words" -- "$cur"))
  return 0
}
complete -o default -F _svc svc
`;
}

function zsh(specs: CommandSpec[]): string {
  const described = specs.map((s) => `    ${sq(`${s.name}:${shortAbout(s.about).replace(/:/g, '\\:')}`)}`).join('\n');
  const flagCases = specs.map((s) => `      ${s.name}) compadd -- ${words(s.flags)} ;;`).join('\n');
  const argCases = specs
    .filter((s) => s.takesApp || s.actions.length)
    .map((s) => `      ${s.name}) compadd -- ${s.takesApp ? '${(f)"$(svc apps --names 2>/dev/null)"}' : words(s.actions)}; return ;;`)
    .join('\n');
  return `#compdef svc
# zsh completion for svc (svc completion zsh): source <(svc completion zsh), after compinit
_svc() {
  local -a commands
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'svc command' commands
    return
  fi
  local cmd=\${words[2]}
  if [[ \${words[CURRENT]} == -* ]]; then
    case $cmd in
${flagCases}
    esac
    return
  fi
  if (( CURRENT == 3 )); then
    case $cmd in
${argCases}
    esac
  fi
  _files
}
compdef _svc svc
`;
}

function fish(specs: CommandSpec[]): string {
  const lines = [
    '# fish completion for svc (svc completion fish): svc completion fish | source',
    'function __svc_at_command',
    '  test (count (commandline -opc)) -eq 1',
    'end',
    'function __svc_first_argument_of',
    '  set -l words (commandline -opc)',
    '  test (count $words) -eq 2; and contains -- $words[2] $argv',
    'end',
    'function __svc_using',
    '  set -l words (commandline -opc)',
    '  test (count $words) -ge 2; and test $words[2] = $argv[1]',
    'end',
  ];
  for (const s of specs) lines.push(`complete -c svc -n __svc_at_command -f -a ${s.name} -d ${fishSq(shortAbout(s.about))}`);
  const withApp = specs.filter((s) => s.takesApp).map((s) => s.name);
  lines.push(`complete -c svc -n '__svc_first_argument_of ${words(withApp)}' -f -a '(svc apps --names 2>/dev/null)'`);
  for (const s of specs.filter((x) => x.actions.length)) lines.push(`complete -c svc -n '__svc_first_argument_of ${s.name}' -f -a ${sq(words(s.actions))}`);
  for (const s of specs) {
    for (const f of s.flags) {
      const opt = f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`;
      lines.push(`complete -c svc -n '__svc_using ${s.name}' ${opt}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** Pure: the completion script for a shell. */
export function completionScript(shell: Shell, specs: CommandSpec[] = commandSpecs()): string {
  return shell === 'bash' ? bash(specs) : shell === 'zsh' ? zsh(specs) : fish(specs);
}
