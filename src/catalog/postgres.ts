// Relational database A (SPEC.md 2.5): the official postgres image's environment contract.
import type { Credentials, ExecCommand, ServiceKind, UpgradeOps } from './catalog.js';
import { postgresCopyDump } from './copy-dumps.js';
import { randomPassword } from './random.js';

const PORT = 5432;

/** Where a version's image keeps its data (PGDATA). */
const postgresDataPath = (version: string | undefined) => (Number(version) >= 18 ? `/var/lib/postgresql/${version}/docker` : '/var/lib/postgresql/data');

export const postgres: ServiceKind = {
  type: 'postgres',
  officialImage: (v) => `postgres:${v}`,
  internalPort: PORT,
  dataPath: '/var/lib/postgresql/data',
  // 18's image keeps PGDATA at /var/lib/postgresql/18/docker and refuses a mount at .../data
  // (docker-library/postgres #1259): the service's directory is mounted at that PGDATA instead.
  dataPathAt: (v) => postgresDataPath(v),
  generateCredentials: () => ({ user: 'svc', password: randomPassword(), database: 'app' }),
  // PGDATA said, not left to the image: the mount and the server agree whatever the image's default.
  container: (c, _place, version) => ({
    env: { POSTGRES_USER: c.user, POSTGRES_PASSWORD: c.password, POSTGRES_DB: c.database, PGDATA: postgresDataPath(version) },
  }),
  // Over TCP, not the socket: the image's init phase runs a socket-only server that would look ready.
  readiness: (c) => ({
    kind: 'exec',
    tcpPort: PORT,
    exec: { cmd: ['pg_isready', '-U', c.user, '-d', c.database, '-h', '127.0.0.1', '-p', String(PORT)] },
  }),
  credentialFields: (c, place) => ({ host: place.host, port: PORT, database: c.database, user: c.user, password: c.password }),
  envPrefix: 'SQLA',
  envFields: [
    ['HOST', 'host'],
    ['PORT', 'port'],
    ['DB', 'database'],
    ['USER', 'user'],
    ['PASSWORD', 'password'],
  ],
  dump: (c) => ({ cmd: ['pg_dumpall', '-U', c.user], env: { PGPASSWORD: c.password } }),
  // Into the maintenance database: pg_dumpall's script connects to each database itself.
  loadDump: (c, file) => ({ cmd: ['psql', '-h', '127.0.0.1', '-U', c.user, '-d', 'postgres', '-q', '-f', file], env: { PGPASSWORD: c.password } }),
};

// Every database but the templates, each set read-only (default_transaction_read_only: a guard against
// the apps' writes, which a session could lift itself) or back; sessions of the apps are ended so that
// theirs take the new default when they reconnect.
const EACH_DB = (body: string) =>
  `DO $$ DECLARE d text; BEGIN FOR d IN SELECT datname FROM pg_database WHERE NOT datistemplate LOOP EXECUTE format('${body}', d); END LOOP; END $$;`;
const FREEZE_SQL =
  EACH_DB('ALTER DATABASE %I SET default_transaction_read_only = on') +
  " SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend';";
const UNFREEZE_SQL = EACH_DB('ALTER DATABASE %I RESET default_transaction_read_only');
/** A client setting outranks the database's: svc's own sessions write while the apps' are read-only. */
const WRITER = '-c default_transaction_read_only=off';

const psqlAt = (c: Credentials, database: string, sql: string): ExecCommand => ({
  cmd: ['psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-U', c.user, '-d', database, '-c', sql],
  env: { PGPASSWORD: c.password, PGOPTIONS: WRITER },
});

// Per table: rows and an md5 of the sorted md5s of its rows' text, computed in one query through
// query_to_xml (a read-only statement, so it runs on the frozen old side too).
const TABLE_SUMS_SQL = `SELECT format('%I.%I', schemaname, tablename) || ' ' || (xpath('/row/n/text()', x))[1]::text || ' ' || coalesce((xpath('/row/h/text()', x))[1]::text, '-')
FROM (SELECT schemaname, tablename, query_to_xml(format('SELECT count(*) AS n, md5(string_agg(md5(t::text), '''' ORDER BY md5(t::text))) AS h FROM %I.%I t', schemaname, tablename), false, true, '') AS x
  FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')) s
ORDER BY 1`;

const postgresUpgrade: UpgradeOps = {
  freeze: (c) => psqlAt(c, 'postgres', FREEZE_SQL),
  unfreeze: (c) => psqlAt(c, 'postgres', UNFREEZE_SQL),
  // The new version's pg_dumpall reads the old server (as upstream advises: the newer client), its
  // script goes into the new server; stderr keeps the load's errors, which the reconciler reads. No shell
  // input comes from a request: the host is a validated container name, passed as $1 with the user as $2.
  move: (c, fromHost) => ({
    cmd: ['sh', '-c', '{ pg_dumpall -h "$1" -U "$2" || echo "svc: pg_dumpall failed" >&2; } | psql -X -q -h 127.0.0.1 -U "$2" -d postgres >/dev/null', 'svc-move', fromHost, c.user],
    env: { PGPASSWORD: c.password, PGOPTIONS: WRITER },
  }),
  expectedLoadErrors: (c) => [new RegExp(`role "${c.user}" already exists`), new RegExp(`database "${c.database}" already exists`)],
  databases: (c) => psqlAt(c, 'postgres', 'SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY 1'),
  tableSums: (c, database) => psqlAt(c, database, TABLE_SUMS_SQL),
};
postgres.upgrade = postgresUpgrade;
postgres.copyDump = postgresCopyDump;
