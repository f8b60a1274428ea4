// The flags each CLI command accepts (node:util parseArgs), in one table next to the usage texts: the
// parser in src/cli.ts and the completion scripts (completion.ts) both read it, so a flag that parses is a
// flag that completes.
import type { ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `--json`: the listing prints the API's JSON answer as is instead of a table. */
const json = { json: { type: 'boolean' } } as const;

export const OPTIONS: Record<string, Options> = {
  serve: {},
  login: {},
  logout: {},
  whoami: { ...json },
  apply: { file: { type: 'string', short: 'f' }, name: { type: 'string' }, 'dry-run': { type: 'boolean' }, prune: { type: 'boolean' }, 'prune-services': { type: 'boolean' }, 'no-wait': { type: 'boolean' }, 'allow-upgrade': { type: 'boolean' } },
  diff: { file: { type: 'string', short: 'f' }, prune: { type: 'boolean' } },
  apps: { ...json, names: { type: 'boolean' } },
  services: { ...json, revert: { type: 'boolean' }, confirm: { type: 'boolean' }, 'keep-days': { type: 'string' }, 'no-wait': { type: 'boolean' }, into: { type: 'string' }, 'full-backup': { type: 'string' }, output: { type: 'string', short: 'o' }, every: { type: 'string' }, retain: { type: 'string' } },
  deploys: { ...json },
  deploy: { image: { type: 'string' }, follow: { type: 'boolean' } },
  logs: { tail: { type: 'string' }, follow: { type: 'boolean' } },
  backup: { output: { type: 'string', short: 'o' }, ...json },
  restore: { target: { type: 'string' }, latest: { type: 'boolean' }, identity: { type: 'string', short: 'i' } },
  nodes: { manager: { type: 'boolean' }, ...json },
  top: { ...json },
  exec: { replica: { type: 'string' } },
  notify: { type: { type: 'string' }, url: { type: 'string' }, config: { type: 'string' }, events: { type: 'string' }, limit: { type: 'string' }, ...json },
  target: { endpoint: { type: 'string' }, region: { type: 'string' }, bucket: { type: 'string' }, prefix: { type: 'string' }, ...json },
  registry: { username: { type: 'string' }, 'password-stdin': { type: 'boolean' }, ...json },
  tokens: { ...json },
  templates: { ...json },
  stacks: {
    file: { type: 'string', short: 'f' }, template: { type: 'string' }, var: { type: 'string', multiple: true }, secret: { type: 'string', multiple: true },
    input: { type: 'string', multiple: true }, service: { type: 'string', multiple: true }, 'dry-run': { type: 'boolean' }, purge: { type: 'boolean' }, ...json,
  },
  uninstall: { purge: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } },
  run: { timeout: { type: 'string' }, detach: { type: 'boolean' } },
  jobs: { run: { type: 'string' }, ...json },
  volumes: { ...json },
  repo: { 'code-host': { type: 'string' }, 'token-stdin': { type: 'boolean' }, 'remove-token': { type: 'boolean' } },
  previews: {
    on: { type: 'boolean' }, off: { type: 'boolean' }, max: { type: 'string' }, 'ttl-days': { type: 'string' }, services: { type: 'string' },
    forks: { type: 'boolean' }, 'no-forks': { type: 'boolean' }, memory: { type: 'string' }, cpus: { type: 'string' },
    env: { type: 'string', multiple: true }, 'unset-env': { type: 'string', multiple: true }, ...json,
  },
  completion: {},
};

/** Every flag of a command as typed (`--file`, `-f`), `--help` included: what a completion script offers. */
export function flagsOf(command: string): string[] {
  const out: string[] = [];
  for (const [name, o] of Object.entries(OPTIONS[command] ?? {})) {
    out.push(`--${name}`);
    if (o.short) out.push(`-${o.short}`);
  }
  return [...out, '--help'];
}

/** The flags of a command that take a value (`--image REF`): the word after one is not a positional. */
export function valueFlagsOf(command: string): string[] {
  return Object.entries(OPTIONS[command] ?? {}).flatMap(([name, o]) => (o.type === 'string' ? [`--${name}`, ...(o.short ? [`-${o.short}`] : [])] : []));
}
