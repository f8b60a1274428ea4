// Relational database B (SPEC.md 2.5): the official mysql image's environment contract. The root password
// is generated and kept for readiness and dumps, but it is not one of the five fields apps get.
import type { ServiceKind } from './catalog.js';
import { mysqlCopyDump } from './copy-dumps.js';
import { mysqlUpgrade } from './mysql-upgrade.js';
import { randomPassword } from './random.js';

const PORT = 3306;

export const mysql: ServiceKind = {
  type: 'mysql',
  officialImage: (v) => `mysql:${v}`,
  internalPort: PORT,
  dataPath: '/var/lib/mysql',
  generateCredentials: () => ({ user: 'svc', password: randomPassword(), database: 'app', root_password: randomPassword() }),
  container: (c) => ({
    env: { MYSQL_ROOT_PASSWORD: c.root_password, MYSQL_DATABASE: c.database, MYSQL_USER: c.user, MYSQL_PASSWORD: c.password },
  }),
  // TCP, not the socket: the init phase runs with --skip-networking. Password through MYSQL_PWD, not argv.
  readiness: (c) => ({
    kind: 'exec',
    tcpPort: PORT,
    exec: { cmd: ['mysqladmin', 'ping', '-uroot', '-h127.0.0.1', `-P${PORT}`, '--silent'], env: { MYSQL_PWD: c.root_password } },
  }),
  credentialFields: (c, place) => ({ host: place.host, port: PORT, database: c.database, user: c.user, password: c.password }),
  envPrefix: 'SQLB',
  envFields: [
    ['HOST', 'host'],
    ['PORT', 'port'],
    ['DATABASE', 'database'],
    ['USER', 'user'],
    ['PASSWORD', 'password'],
  ],
  dump: (c) => ({ cmd: ['mysqldump', '--all-databases', '--single-transaction', '-uroot'], env: { MYSQL_PWD: c.root_password } }),
  upgrade: mysqlUpgrade,
  copyDump: (c) => mysqlCopyDump(c),
  loadDump: (c, file) => ({ cmd: ['mysql', '-uroot', '-h127.0.0.1', `-P${PORT}`, '-e', `source ${file}`], env: { MYSQL_PWD: c.root_password } }),
};
