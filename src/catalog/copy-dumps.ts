// Dumps of a service's data meant to be loaded into ANOTHER service of the same type (a preview's copy,
// issue 33 section 4): the apps' data without the credentials, so the copy keeps its own. postgres:
// pg_dumpall without the roles' passwords (its roles exist with the copy's password, which an ALTER ROLE
// without PASSWORD keeps); mysql: the apps' databases only (the system schema holds the users). Small and
// apart so the per-service backups (section 3) can share or replace them.
import type { Credentials, ExecCommand } from './catalog.js';
import { MYSQL_USER_DATABASES } from './mysql-upgrade.js';

export const postgresCopyDump = (c: Credentials): ExecCommand => ({ cmd: ['pg_dumpall', '-U', c.user, '--no-role-passwords'], env: { PGPASSWORD: c.password } });

export const mysqlCopyDump = (c: Credentials): ExecCommand => ({
  cmd: [
    'sh',
    '-c',
    `dbs=$(mysql -uroot -h127.0.0.1 -N -B -e "${MYSQL_USER_DATABASES}") || exit 1; [ -n "$dbs" ] || exit 0; exec mysqldump -uroot -h127.0.0.1 --single-transaction --routines --events --triggers --hex-blob --databases $dbs`,
    'svc-copy',
  ],
  env: { MYSQL_PWD: c.root_password },
});
