// How one service's data is dumped and loaded back (issue 33 section 3, decision 0052), per type, beside
// the catalog entries so that a type's other operations stay in its own file. Every command is an argument
// array run inside the service's container; a secret goes in its environment, never in argv. A dump
// carries the data and not the service's own users' passwords, so it loads into a copy (a new service with
// its own credentials) as well as back into its service.
import type { Credentials, ExecCommand } from './catalog.js';
import type { ServiceType } from './types.js';

export interface ServiceBackupOps {
  /** The file's extension under service-backups/ (before `.gz`). */
  ext: 'sql' | 'rdb';
  /** Writes the dump on stdout. */
  dump(creds: Credentials): ExecCommand;
  /** Run before the load (into the same service): removes what the load recreates. */
  clear?(creds: Credentials): ExecCommand;
  /** Loads the (uncompressed) dump from `file`, a path inside the container. */
  load(creds: Credentials, file: string): ExecCommand;
  /** Lines of the load's stderr that are expected (objects a fresh server already has). */
  expectedLoadErrors(creds: Credentials): RegExp[];
}

const PG_WRITER = '-c default_transaction_read_only=off';
const pgEnv = (c: Credentials) => ({ PGPASSWORD: c.password, PGOPTIONS: PG_WRITER });
const psql = (c: Credentials, sql: string): ExecCommand => ({
  cmd: ['psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-U', c.user, '-d', 'postgres', '-c', sql],
  env: pgEnv(c),
});

// Every database but the templates and the maintenance one, dropped with its sessions (FORCE, 13+). A
// DROP DATABASE cannot run inside a function, so the statements are listed by one psql and run by another.
const PG_DROPS = `SELECT format('DROP DATABASE %I WITH (FORCE);', datname) FROM pg_database WHERE NOT datistemplate AND datname <> 'postgres'`;
const PG_CLEAR = 'set -e; drops=$(psql -X -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -U "$1" -d postgres -c "$2"); printf \'%s\\n\' "$drops" | psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U "$1" -d postgres -f -';

export const postgresBackup: ServiceBackupOps = {
  ext: 'sql',
  // --no-role-passwords: a copy keeps the password svc generated for it (the roles themselves come back).
  dump: (c) => ({ cmd: ['pg_dumpall', '-h', '127.0.0.1', '-U', c.user, '--no-role-passwords'], env: pgEnv(c) }),
  clear: (c) => ({ cmd: ['sh', '-c', PG_CLEAR, 'svc-clear', c.user, PG_DROPS], env: pgEnv(c) }),
  load: (c, file) => ({ cmd: ['psql', '-X', '-q', '-h', '127.0.0.1', '-U', c.user, '-d', 'postgres', '-f', file], env: pgEnv(c) }),
  expectedLoadErrors: (c) => [/role ".*" already exists/, new RegExp(`database "${c.database}" already exists`), /current user cannot be dropped/],
};

const MYSQL_SYSTEM = "'mysql','information_schema','performance_schema','sys'";
const mysqlSh = (c: Credentials, script: string, ...args: string[]): ExecCommand => ({ cmd: ['sh', '-c', script, 'svc-backup', ...args], env: { MYSQL_PWD: c.root_password } });
const USER_DBS = `mysql -uroot -h127.0.0.1 -N -B -e "SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN (${MYSQL_SYSTEM})"`;

export const mysqlBackup: ServiceBackupOps = {
  ext: 'sql',
  // The users' databases only: mysql.* holds the accounts and their passwords, which a copy keeps its own of.
  dump: (c) => mysqlSh(c, `set -e; dbs=$(${USER_DBS}); [ -n "$dbs" ] || exit 0; exec mysqldump -uroot -h127.0.0.1 --single-transaction --routines --events --databases $dbs`),
  clear: (c) => mysqlSh(c, `set -e; for d in $(${USER_DBS}); do mysql -uroot -h127.0.0.1 -e "DROP DATABASE \\\`$d\\\`"; done`),
  load: (c, file) => mysqlSh(c, 'exec mysql -uroot -h127.0.0.1 < "$1"', file),
  expectedLoadErrors: () => [],
};

// Redis: the RDB as the server itself would send it to a replica (redis-cli --rdb). A load starts a second
// server in the container on the file, makes the service's server its replica (the engine's own way to
// replace a whole dataset while it runs, with its append-only file rewritten), then detaches and stops it.
const REDIS_LOAD = `set -e
d=$(mktemp -d); cp "$1" "$d/dump.rdb"
redis-server --port 6390 --bind 127.0.0.1 --requirepass "$REDISCLI_AUTH" --appendonly no --save '' --dir "$d" --dbfilename dump.rdb --daemonize yes --logfile "$d/log"
cli() { redis-cli -h 127.0.0.1 -p 6379 "$@"; }
stop() { redis-cli -h 127.0.0.1 -p 6390 shutdown nosave >/dev/null 2>&1 || true; rm -rf "$d"; }
trap stop EXIT
i=0; until redis-cli -h 127.0.0.1 -p 6390 ping 2>/dev/null | grep -q PONG; do i=$((i+1)); [ $i -lt 300 ] || { echo "svc: the loading server did not start: $(tail -3 "$d/log")" >&2; exit 1; }; sleep 0.1; done
want=$(redis-cli -h 127.0.0.1 -p 6390 info keyspace | tr -d '\\r' | grep '^db' | sed 's/,expires=.*//' | sort | tr '\\n' ' ')
cli config set masterauth "$REDISCLI_AUTH" >/dev/null
cli replicaof 127.0.0.1 6390 >/dev/null
i=0; until cli info replication | tr -d '\\r' | grep -q '^master_link_status:up'; do i=$((i+1)); [ $i -lt 1200 ] || { cli replicaof no one >/dev/null; echo "svc: the replication of the backup did not finish" >&2; exit 1; }; sleep 0.1; done
cli replicaof no one >/dev/null
got=$(cli info keyspace | tr -d '\\r' | grep '^db' | sed 's/,expires=.*//' | sort | tr '\\n' ' ')
[ "$got" = "$want" ] || { echo "svc: key counts differ after the load: backup $want, service $got" >&2; exit 1; }`;

export const redisBackup: ServiceBackupOps = {
  ext: 'rdb',
  dump: (c) => ({ cmd: ['sh', '-c', 'set -e; f=$(mktemp); redis-cli -h 127.0.0.1 -p 6379 --rdb "$f" >/dev/null; cat "$f"; rm -f "$f"'], env: { REDISCLI_AUTH: c.password } }),
  load: (c, file) => ({ cmd: ['sh', '-c', REDIS_LOAD, 'svc-restore', file], env: { REDISCLI_AUTH: c.password } }),
  expectedLoadErrors: () => [],
};

const OPS: Partial<Record<ServiceType, ServiceBackupOps>> = { postgres: postgresBackup, mysql: mysqlBackup, redis: redisBackup };

/** The backup operations of a type; undefined for a type without them yet (garage). */
export const backupOpsOf = (type: ServiceType): ServiceBackupOps | undefined => OPS[type];
