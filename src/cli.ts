#!/usr/bin/env node
// `svc serve | login | apply | diff | apps | stacks | deploy | logs | run | jobs | volumes | repo | previews | backup | restore | nodes | notify | target | uninstall | completion ...`
// (docs/api.md "CLI"; usage.ts lists them all). Only `serve` runs the daemon; `restore FILE` and `uninstall` work offline on the data directory (`restore ID`
// asks the daemon), `completion` prints a script; `login`, `logout` and `whoami` keep or use the login file; every other command is a thin client of the REST
// API. Errors print one sentence (the API's `error`) and exit non-zero, never a stack trace.
import { parseArgs } from 'node:util';
import { applyCommand, diffCommand } from './cli/apply.js';
import { appsCommand, deployCommand, logsCommand } from './cli/apps.js';
import { backupCommand, restoreCommand } from './cli/backup.js';
import { nodesCommand } from './cli/nodes.js';
import { notifyCommand } from './cli/notify.js';
import { CliError, clientSettings, createClient } from './cli/client.js';
import { COMMANDS, commandUsage, mainUsage } from './cli/usage.js';
import { OPTIONS } from './cli/options.js';

function usageError(command: string, message: string): never {
  throw new CliError(`${message}\n${commandUsage(command)}`, 2);
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // No command is a request for help, never a second daemon: `svc serve` says it explicitly.
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(mainUsage());
    return 0;
  }
  if (!(command in COMMANDS)) throw new CliError(`unknown command "${command}"\n${mainUsage()}`, 2);
  let parsed;
  try {
    // `svc run APP -- CMD ...`: everything after `--` is the command's, never an option of ours.
    parsed = parseArgs({ args: rest, options: { ...OPTIONS[command], help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    usageError(command, (err as Error).message);
  }
  const { values: v, positionals: pos } = parsed as { values: Record<string, string | boolean | undefined>; positionals: string[] };
  if (v.help) {
    process.stdout.write(commandUsage(command));
    return 0;
  }
  const expect = (n: number) => pos.length !== n && usageError(command, pos.length > n ? `unexpected argument "${pos[n]}"` : 'missing argument');
  if (command === 'serve') {
    expect(0);
    const { serveCommand } = await import('./cli/serve.js');
    await serveCommand();
    return -1; // keeps running
  }
  if (command === 'uninstall') {
    expect(0);
    const { uninstallCommand } = await import('./cli/uninstall.js');
    return uninstallCommand({ purge: !!v.purge, yes: !!v.yes });
  }
  if (command === 'completion') {
    expect(1);
    const { completionScript, SHELLS } = await import('./cli/completion.js');
    if (!(SHELLS as readonly string[]).includes(pos[0])) usageError(command, `unknown shell "${pos[0]}": bash, zsh or fish`);
    process.stdout.write(completionScript(pos[0] as 'bash'));
    return 0;
  }
  if (command === 'login' || command === 'logout' || command === 'whoami') {
    const login = await import('./cli/login.js');
    if (command === 'login') {
      if (pos.length > 1) usageError(command, `unexpected argument "${pos[1]}"`);
      const { stdioPrompter } = await import('./cli/prompt.js');
      return login.loginCommand({ url: pos[0], prompt: stdioPrompter() });
    }
    expect(0);
    return command === 'logout' ? login.logoutCommand() : login.whoamiCommand({ json: !!v.json });
  }
  const json = !!v.json;
  const client = createClient(clientSettings());
  switch (command) {
    case 'apply':
    case 'diff': {
      expect(0);
      if (typeof v.file !== 'string') usageError(command, '-f PATH is required');
      return command === 'apply'
        ? applyCommand(client, { path: v.file, name: v.name as string | undefined, dryRun: !!v['dry-run'], prune: !!v.prune, pruneServices: !!v['prune-services'], noWait: !!v['no-wait'], allowUpgrade: !!v['allow-upgrade'] })
        : diffCommand(client, { path: v.file, prune: !!v.prune });
    }
    case 'apps':
      expect(0);
      if (v.json && v.names) usageError(command, '--json and --names exclude each other');
      return appsCommand(client, { json, names: !!v.names });
    case 'services': {
      if (pos[0] !== 'upgrade') {
        if (v.revert || v.confirm || v['keep-days'] !== undefined || v['no-wait']) usageError(command, '--revert, --confirm, --keep-days and --no-wait go with upgrade');
        if (pos.length === 0) return (await import('./cli/lists.js')).servicesCommand(client, { json });
        // svc services backup|backups|restore|download|schedule NAME [BACKUP_ID]
        if (pos.length > (pos[0] === 'restore' || pos[0] === 'download' ? 3 : 2)) usageError(command, `unexpected argument "${pos[pos.length - 1]}"`);
        return (await import('./cli/service-backups.js')).serviceBackupCommand(client, {
          action: pos[0], name: pos[1], id: pos[2], into: v.into as string | undefined, fullBackup: v['full-backup'] as string | undefined, output: v.output as string | undefined, every: v.every as string | undefined, retain: v.retain as string | undefined, json,
        });
      }
      const ending = !!v.revert || !!v.confirm;
      if (v.revert && v.confirm) usageError(command, '--revert and --confirm exclude each other');
      if (pos.length !== (ending ? 2 : 3)) usageError(command, ending ? 'expected upgrade NAME --revert or --confirm' : 'expected upgrade NAME VERSION');
      const keepDays = v['keep-days'] === undefined ? undefined : Number(v['keep-days']);
      if (keepDays !== undefined && (!Number.isInteger(keepDays) || keepDays < 0)) usageError(command, '--keep-days must be a whole number');
      const { serviceUpgradeCommand } = await import('./cli/service-upgrade.js');
      return serviceUpgradeCommand(client, { name: pos[1], version: pos[2], revert: !!v.revert, confirm: !!v.confirm, keepDays, noWait: !!v['no-wait'], json });
    }
    case 'deploys':
      expect(1);
      return (await import('./cli/lists.js')).deploysCommand(client, { app: pos[0], json });
    case 'tokens':
      expect(0);
      return (await import('./cli/lists.js')).tokensCommand(client, { json });
    case 'stacks': {
      const { parseStacksArgs, stacksCommand } = await import('./cli/stacks.js');
      const o = parseStacksArgs(pos, v);
      if (typeof o === 'string') usageError(command, o);
      return stacksCommand(client, o);
    }
    case 'templates':
      if (pos.length > 1) usageError(command, `unexpected argument "${pos[1]}"`);
      return (await import('./cli/templates.js')).templatesCommand(client, { name: pos[0], json });
    case 'deploy':
      expect(1);
      return deployCommand(client, { app: pos[0], image: v.image as string | undefined, follow: !!v.follow });
    case 'logs': {
      expect(1);
      const tail = v.tail === undefined ? 100 : Number(v.tail);
      if (!Number.isInteger(tail) || tail < 0) usageError(command, '--tail must be a whole number');
      return logsCommand(client, { app: pos[0], tail, follow: !!v.follow });
    }
    case 'backup':
      if (pos.length < 1 || pos.length > 2) usageError(command, 'expected create, list or download ID');
      return backupCommand(client, { action: pos[0], id: pos[1], output: v.output as string | undefined, json });
    case 'restore':
      if (pos.length > 1) usageError(command, `unexpected argument "${pos[1]}"`);
      if (pos.length === 0 && typeof v.target !== 'string') usageError(command, 'missing argument');
      return restoreCommand(client, { file: pos[0], target: v.target as string | undefined, latest: !!v.latest, identity: v.identity as string | undefined });
    case 'jobs': {
      expect(1);
      const { jobsCommand } = await import('./cli/jobs.js');
      return jobsCommand(client, { app: pos[0], run: v.run as string | undefined, json });
    }
    case 'repo': {
      expect(1);
      const { repoCommand } = await import('./cli/repo.js');
      return repoCommand(client, { app: pos[0], codeHost: v['code-host'] as string | undefined, tokenStdin: !!v['token-stdin'], removeToken: !!v['remove-token'] });
    }
    case 'volumes': {
      expect(1);
      const { volumesCommand } = await import('./cli/jobs.js');
      return volumesCommand(client, { app: pos[0], json });
    }
    case 'previews': {
      expect(1);
      const { previewsCommand } = await import('./cli/previews.js');
      const { help: _help, json: _json, ...flags } = v;
      return previewsCommand(client, { app: pos[0], flags: flags as never, json });
    }
    case 'run': {
      if (pos.length < 2) usageError(command, 'expected APP -- COMMAND [ARG...]');
      const timeout = v.timeout === undefined ? undefined : Number(v.timeout);
      if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1)) usageError(command, '--timeout must be a whole number of seconds');
      const { runCommand } = await import('./cli/run.js');
      return runCommand(client, { app: pos[0], command: pos.slice(1), timeoutSeconds: timeout, detach: !!v.detach });
    }
    case 'nodes':
      return nodesCommand(client, { action: pos[0], args: pos.slice(1), manager: !!v.manager, json });
    case 'top':
      expect(0);
      return (await import('./cli/top.js')).topCommand(client, { json });
    case 'exec': {
      // Everything after `--` is the command: svc exec APP -- CMD [ARG...]
      const dash = rest.indexOf('--');
      if (pos.length < 1) usageError(command, 'missing argument');
      if (dash === -1 && pos.length > 1) usageError(command, 'put the command after --: svc exec APP -- CMD');
      const replica = v.replica === undefined ? undefined : Number(v.replica);
      if (replica !== undefined && (!Number.isInteger(replica) || replica < 0)) usageError(command, '--replica must be a whole number');
      return (await import('./cli/exec.js')).execCommand(client, { app: pos[0], cmd: pos.slice(1), replica });
    }
    case 'notify':
      if (pos.length < 1 || pos.length > 2) usageError(command, 'expected list, add NAME, test NAME, rm NAME or log');
      return notifyCommand(client, { ...(v as Record<string, string | undefined>), action: pos[0], name: pos[1], json });
    case 'target': {
      const { targetCommand } = await import('./cli/targets.js');
      return targetCommand(client, { action: pos[0], name: pos[1], endpoint: v.endpoint as string | undefined, region: v.region as string | undefined, bucket: v.bucket as string | undefined, prefix: v.prefix as string | undefined, json });
    }
    case 'registry': {
      const { registryCommand } = await import('./cli/registries.js');
      return registryCommand(client, { action: pos[0], server: pos[1], username: v.username as string | undefined, passwordStdin: !!v['password-stdin'], json });
    }
  }
  return 0;
}

try {
  const code = await run(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (err) {
  const e = err instanceof CliError ? err : new CliError(err instanceof Error ? err.message : String(err));
  process.stderr.write(`svc: ${e.message.trimEnd()}\n`);
  process.exitCode = e.exitCode;
}
