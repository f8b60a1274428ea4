// The CLI's help texts (svc --help, svc COMMAND --help): one place, so the usage a user reads is the
// usage the parser accepts.
const JSON_OPTION = "      --json          print the API's JSON answer as is instead of a table";

export const COMMANDS: Record<string, { usage: string; about: string; options?: string }> = {
  serve: { usage: 'svc serve', about: 'run the svc daemon (API, UI and reconcilers) in the foreground' },
  login: {
    usage: 'svc login [URL]',
    about: 'log in to the daemon at URL (default: SVC_URL, the last login, http://127.0.0.1:$SVC_PORT): asks for user, password and second-factor code, keeps a token in ~/.config/svc/config',
    options: `  On a terminal the password is not echoed; from a pipe the answers are stdin's lines (user, password, code).
  The token is named svc-cli@HOSTNAME; a later login from this host replaces it.`,
  },
  logout: { usage: 'svc logout', about: "revoke the login's token on the daemon and delete ~/.config/svc/config" },
  whoami: { usage: 'svc whoami [--json]', about: 'the user, role and daemon URL the CLI acts as, and where URL and token come from', options: JSON_OPTION },
  apply: {
    usage: 'svc apply -f PATH [--name STACK] [--dry-run] [--prune] [--prune-services] [--allow-upgrade] [--no-wait]',
    about: 'apply manifests from a file or a directory (*.yaml, *.yml) through the API, then wait for the deploys it started; exit 1 if one fails',
    options: `  -f, --file PATH     a manifest file or a directory of them; a Compose file (services:, no kind:) is the Stack named
                      after its folder, or --name STACK
      --name STACK    the stack a Compose file PATH becomes
      --dry-run       show the plan, change nothing
      --prune         delete apps an earlier \`svc apply\` created that PATH no longer declares
      --prune-services  with --prune, delete such services too
      --allow-upgrade start the guarded upgrade of a service whose declared version is later (without it
                  such a change is an error that shows the upgrade's plan)
      --no-wait       do not wait for the deploys the apply started`,
  },
  diff: {
    usage: 'svc diff -f PATH [--prune]',
    about: 'show what `svc apply` would change; exit 0 without changes, 1 with changes, 2 on errors',
    options: `  -f, --file PATH     a manifest file or a directory of them
      --prune         include the deletions \`svc apply --prune\` would make`,
  },
  apps: {
    usage: 'svc apps [--json | --names]',
    about: 'list apps: name, status, image, access URL',
    options: `${JSON_OPTION}
      --names         only the names, one a line (what the completion scripts read)`,
  },
  services: {
    usage: 'svc services [--json] | upgrade NAME VERSION [--keep-days N] [--no-wait] | upgrade NAME --revert | --confirm | backup NAME | backups NAME | restore NAME BACKUP_ID [--into NEW] | restore NAME --full-backup ID | download NAME BACKUP_ID [-o FILE] | schedule NAME [--every MINUTES] [--retain N]',
    about: "list managed services: name, type, version, status, image, the apps linked to each; upgrade one to a later major version, guarded; back one up alone, list its backups, restore one into it (a safety backup first) or into a new service, download one, set its schedule",
    options: `${JSON_OPTION}
  upgrade NAME VERSION  a backup, a new container of VERSION, the data moved (writes refused, reads served),
                  verified, then the linked apps redeployed onto it; prints each step until it switched or failed
      --keep-days N   keep the old version stopped N days for a revert (default 7)
      --no-wait       start it and return
      --revert        go back to the kept old version (what was written since the switch is lost)
      --confirm       drop the kept old version and its data
      --into NEW      restore into a new service NEW (a copy), leaving NAME as it is
      --full-backup ID  restore NAME's dump in full-state backup ID (postgres, mysql)
  -o, --output FILE   where download writes the gzip'd dump (default: its name)
      --every M       schedule: a backup every M minutes (0: none)
      --retain N      schedule: keep the newest N backups (here and at every backup target)`,
  },
  deploys: { usage: 'svc deploys APP [--json]', about: "list an app's deploys, newest first: id, status, image, origin, time", options: JSON_OPTION },
  deploy: {
    usage: 'svc deploy APP [--image REF] [--follow]',
    about: 'deploy an app (its current image, or REF); with --follow print its events, exit 0 only on success',
    options: `      --image REF     the image to deploy (default: the app's image_ref)
      --follow        follow the deploy's events until it ends`,
  },
  logs: {
    usage: 'svc logs APP [--tail N] [--follow]',
    about: "print the app's live container logs",
    options: `      --tail N        lines from the end to start with (default 100)
      --follow        keep following (also across deploys) until interrupted`,
  },
  run: {
    usage: 'svc run APP [--timeout SECONDS] [--detach] -- COMMAND [ARG...]',
    about: "run a one-off command in the app's live image (its variables, links and volumes); prints its output and exits with its status",
    options: `      --timeout S     stop it after S seconds (default 3600; exit status 124)
      --detach        start it and return; its output is kept in the run's record
  The words after -- run as an argument array, without a shell: write sh -c '...' for one.`,
  },
  jobs: {
    usage: 'svc jobs APP [--run JOB] [--json]',
    about: "list the app's scheduled jobs with their last run; --run JOB runs one now",
    options: `      --run JOB       ask for a run of JOB now (its overlap rule applies)
${JSON_OPTION}`,
  },
  repo: {
    usage: 'svc repo APP [--code-host HOST] [--token-stdin | --remove-token]',
    about: "show or set the app's code host and repository access token (the token is never printed)",
    options: `      --code-host HOST  github, gitlab, gitea, forgejo, or auto (derive it from the repository URL)
      --token-stdin     read the access token for cloning a private repository from standard input
      --remove-token    remove the access token`,
  },
  volumes: { usage: 'svc volumes APP [--json]', about: "list the app's persistent volumes, its deploy strategy and its drain", options: `${JSON_OPTION} (the app's volumes, deploy_strategy and drain_seconds fields)` },
  previews: {
    usage: 'svc previews APP [--json] [--on | --off] [--max N] [--ttl-days N] [--services none|fresh|copy] [--forks | --no-forks] [--memory MB] [--cpus N] [--env KEY=VALUE]... [--unset-env KEY]...',
    about: "list the app's pull-request previews (state, commit, branch, age, URL); with flags, change its previews settings first",
    options: `      --on, --off     turn previews of pull requests on or off (off removes every preview)
      --max N         at most N previews; the one with the oldest commit goes for a new one (default 5)
      --ttl-days N    remove a preview after N days without a commit (default 7)
      --services S    none; fresh: an empty instance of each service the app links, removed with the preview;
                      copy: the same, loaded with a copy of the linked service's data (postgres, mysql)
      --forks         previews of pull requests from forks too (never with the app's secrets); --no-forks
      --memory MB, --cpus N   limits of each preview (default 256 MB, 0.5 CPU)
      --env KEY=VALUE a variable set on every preview over the app's own (repeatable); --unset-env KEY
${JSON_OPTION} (GET /api/apps/{id}/previews)`,
  },
  backup: {
    usage: 'svc backup create | list [--json] | download ID [-o FILE]',
    about: 'create a backup (and wait for it), list backups, or download an archive',
    options: `  -o, --output FILE   where to write the archive (default: its own file name here)
${JSON_OPTION} (list)`,
  },
  nodes: {
    usage: 'svc nodes [list | events | join [--manager] | drain NODE | activate NODE | label NODE KEY=VALUE...] [--json]',
    about: 'the machines apps run on and the replicas on each; the nodes that went down and came back (events); the `docker swarm join` command for a new one; drain, activate or label a node (SVC_RUNTIME=swarm)',
    options: `      --manager       with join: the command that joins a manager, not a worker
${JSON_OPTION} (list, events)`,
  },
  top: { usage: 'svc top [--json]', about: "CPU, memory, network and block I/O of every app, service and container, and the host (the last 10 s round)", options: JSON_OPTION },
  exec: {
    usage: 'svc exec APP [--replica N] -- CMD [ARG...]',
    about: "run CMD (default sh) in the app's running container with a TTY (administrators; needs SVC_TOKEN); exits with its code",
    options: '      --replica N     the replica slot (default: the first of the live deploy)',
  },
  restore: {
    usage: 'svc restore ID | FILE | s3://BUCKET/KEY | s3://BUCKET/PREFIX/ --latest | --target NAME --latest',
    about: 'restore backup ID through the daemon (prints each phase), or, with no daemon running, an archive FILE or a copy in a bucket into SVC_DATA_DIR and .env',
    options: `      --latest        the newest svc copy under the s3:// prefix, or of --target
      --target NAME   through the running daemon: import the newest copy of backup target NAME, then restore it
  -i, --identity FILE age identity file for copies encrypted to SVC_BACKUP_AGE_RECIPIENT
  A bucket needs AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, SVC_BACKUP_S3_ENDPOINT (not for AWS),
  SVC_BACKUP_S3_REGION, and SVC_BACKUP_PASSPHRASE or -i.`,
  },
  target: {
    usage: 'svc target list [--json] | add NAME --bucket B [--endpoint URL] [--region R] [--prefix P] | test NAME | remote NAME | remove NAME',
    about: 'backup targets (S3-compatible stores every backup is copied to): add (keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), test, list copies',
    options: `      --bucket B      the bucket (add)
      --endpoint URL  the store's URL, e.g. https://s3.example.com (empty: AWS S3)
      --region R      default us-east-1 (Garage: garage)
      --prefix P      key prefix ending in /, e.g. svc/prod/
${JSON_OPTION} (list, remote)`,
  },
  registry: {
    usage: 'svc registry list [--json] | add SERVER --username U [--password-stdin] | test SERVER | remove SERVER',
    about: 'credentials for private container registries (ghcr.io, registry.example.com:5000, docker.io): images of SERVER are pulled with them',
    options: `      --username U      the registry account (add)
      --password-stdin  read the password or token from stdin (else SVC_REGISTRY_PASSWORD; never an argument)
${JSON_OPTION} (list)`,
  },
  templates: {
    usage: 'svc templates [NAME] [--json]',
    about: 'the one-click stacks svc ships (Plausible, n8n, Nextcloud...); with NAME, what it asks, what it generates and its services',
    options: JSON_OPTION,
  },
  stacks: {
    usage: 'svc stacks [list] [--json] | show NAME [--json] | create NAME (-f COMPOSE_FILE [--var K=V]... [--secret K=V]... | --template T [--input K=V]...) [--dry-run] | update NAME -f COMPOSE_FILE [--dry-run] | deploy NAME [--service S]... | rollback NAME | delete NAME [--purge]',
    about: 'stacks (Compose applications): list, show the services and last deploy, create from a Compose file or a template, update, deploy, roll back, delete',
    options: `  -f, --file FILE     the docker-compose.yml (create, update)
      --var K=V       a variable of the file's \${K} (create); --secret K=V a secret one, stored sealed
      --template T    create from the template T (svc templates); --input K=V for what it asks (DOMAIN=...)
      --dry-run       print the plan per service, change nothing
      --service S     deploy S again even if unchanged (deploy)
      --purge         delete the stack's volumes too (delete)
${JSON_OPTION} (list, show, and the answers of the others)`,
  },
  tokens: { usage: 'svc tokens [--json]', about: 'list your API tokens (names, scopes, expiry, last use; never the tokens themselves)', options: JSON_OPTION },
  completion: {
    usage: 'svc completion bash | zsh | fish',
    about: 'print a shell completion script: commands, flags and app names (from the daemon)',
    options: `  bash: source <(svc completion bash)      (or write it to /etc/bash_completion.d/svc)
  zsh:  source <(svc completion zsh)       (after compinit)
  fish: svc completion fish | source       (or write it to ~/.config/fish/completions/svc.fish)`,
  },
  notify: {
    usage: 'svc notify list [--json] | add NAME --type TYPE (--url URL | --config FILE) [--events E1,E2] | test NAME | rm NAME | log [--limit N] [--json]',
    about: 'notification channels: list, add, send a test (prints the provider\'s answer; exit 1 if not delivered), remove; the delivery log',
    options: `      --type TYPE     webhook, slack (also Mattermost, Rocket.Chat), discord, ntfy or email
      --url URL       the incoming-webhook or ntfy topic URL
      --config FILE   the channel's config as a JSON file (email: host, port, security, username, password, from, to)
      --events LIST   comma-separated events (default: all; see GET /api/notifications/events)
      --limit N       log lines (default 100)
${JSON_OPTION} (list, log)`,
  },
  uninstall: {
    usage: 'svc uninstall [--purge [--yes]]',
    about: "remove this svc's containers, network, proxy and helpers (the daemon must be stopped); the data directory stays unless --purge",
    options: `      --purge         also delete the data directory (SVC_DATA_DIR): asks first, or give --yes
  -y, --yes           with --purge, do not ask`,
  },
};

export function mainUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.about}`);
  return `usage: svc COMMAND [options]

Commands:
${lines.join('\n')}

Every command but serve, restore FILE, uninstall and completion talks to the daemon at SVC_URL with the API token in
SVC_TOKEN: each from the environment, else .env in this directory, else the login of svc login (~/.config/svc/config);
the URL's default is http://127.0.0.1:$SVC_PORT. svc COMMAND --help shows a command's options.

Exit status: 0 done; 1 failed (the daemon refused or is unreachable, a deploy or backup failed, svc diff found
changes, a notification was not delivered); 2 usage error (and svc diff's manifest errors); svc run and svc exec
exit with the command's own status (svc run: 124 when it timed out); 130 interrupted (Ctrl-C).
`;
}

export function commandUsage(name: string): string {
  const c = COMMANDS[name];
  return `usage: ${c.usage}\n\n${c.about}\n${c.options ? `\nOptions:\n${c.options}\n` : ''}`;
}
