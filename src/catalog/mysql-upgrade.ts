// How a mysql service is carried across a major (issue 33): the new version's mysqldump reads the old
// server's own databases (the system schema stays: each version makes its own, and the service's users
// are made by the new container from the same credentials) and its output is loaded into the new server.
// Writes are refused on the old one from the freeze (read_only: the apps' user has no SUPER) until the switch.
import type { Credentials, ExecCommand, UpgradeOps } from './catalog.js';

const PORT = 3306;
/** Root's password through MYSQL_PWD, never argv; svc's sessions are root's, which read_only lets write. */
const sh = (c: Credentials, script: string, ...args: string[]): ExecCommand => ({ cmd: ['sh', '-c', script, 'svc-mysql', ...args], env: { MYSQL_PWD: c.root_password } });
const LOCAL = `mysql -uroot -h127.0.0.1 -P${PORT}`;

/** The databases a service's data lives in: every one but the server's own. */
export const MYSQL_USER_DATABASES = `SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') ORDER BY 1`;

// The sessions of everyone but root and the server's own threads, ended (the apps reconnect and read).
const KILL_APPS = `${LOCAL} -N -B -e "SELECT id FROM information_schema.processlist WHERE user NOT IN ('root', 'system user', 'event_scheduler') AND id <> CONNECTION_ID()" | while read -r id; do ${LOCAL} -e "KILL $id" 2>/dev/null || true; done`;
// A transaction an app keeps open would hold read_only's lock forever: 30 s, then the upgrade fails.
const FREEZE = `set -e; ${KILL_APPS}; ${LOCAL} -e 'SET SESSION lock_wait_timeout = 30; SET GLOBAL read_only = ON'; ${KILL_APPS}`;

/**
 * Per base table of the database: `<table> <rows> <sum> <xor>`, over the md5 of each row's columns as
 * QUOTE()d text (NULL apart from ''), the first 60 bits summed and the next 64 xor-ed: independent of row
 * order and of the storage each version picks, in one read-only query per table generated from
 * information_schema (mysql has no query_to_xml). Spaces in a table's name become `_` in the line.
 */
export const MYSQL_TABLE_SUMS_SQL = `SET SESSION group_concat_max_len = 1048576;
SELECT CONCAT('SELECT ', QUOTE(REPLACE(c.table_name, ' ', '_')), ', COUNT(*), COALESCE(SUM(CAST(CONV(SUBSTR(h, 1, 15), 16, 10) AS UNSIGNED)), 0), COALESCE(BIT_XOR(CAST(CONV(SUBSTR(h, 17, 16), 16, 10) AS UNSIGNED)), 0) FROM (SELECT MD5(CONCAT_WS(\\',\\', ', GROUP_CONCAT(CONCAT('QUOTE(\`', REPLACE(c.column_name, '\`', '\`\`'), '\`)') ORDER BY c.ordinal_position SEPARATOR ', '), ')) AS h FROM \`', REPLACE(c.table_name, '\`', '\`\`'), '\`) t;')
FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema = DATABASE() AND t.table_type = 'BASE TABLE' GROUP BY c.table_name ORDER BY c.table_name`;

// $1 the old host (a validated container name), never spliced into the script. No database of the
// apps' own (only the server's): nothing to move.
const MOVE = `dbs=$(mysql -uroot -h"$1" -P${PORT} -N -B -e "${MYSQL_USER_DATABASES}") || { echo "svc: listing the databases of $1 failed" >&2; exit 1; }
[ -n "$dbs" ] || exit 0
{ mysqldump -uroot -h"$1" -P${PORT} --single-transaction --routines --events --triggers --hex-blob --databases $dbs || echo "svc: mysqldump failed" >&2; } | ${LOCAL}`;

export const mysqlUpgrade: UpgradeOps = {
  freeze: (c) => sh(c, FREEZE),
  unfreeze: (c) => sh(c, `${LOCAL} -e 'SET GLOBAL read_only = OFF'`),
  move: (c, fromHost) => sh(c, MOVE, fromHost),
  // The database the new container made at its first start is in the dump as CREATE DATABASE IF NOT EXISTS.
  expectedLoadErrors: () => [],
  databases: (c) => sh(c, `${LOCAL} -N -B -e "${MYSQL_USER_DATABASES}"`),
  // The generated statements (raw, one a line) run by a second client in the same database, whose exit
  // status is kept (two sides failing alike must not look equal); tabs to spaces.
  tableSums: (c, database) =>
    sh(c, `set -e; sql=$(${LOCAL} -N -B -r -D "$1" -e "$2"); [ -n "$sql" ] || exit 0; out=$(printf '%s\\n' "$sql" | ${LOCAL} -N -B -D "$1"); printf '%s\\n' "$out" | tr '\\t' ' '`, database, MYSQL_TABLE_SUMS_SQL),
};
