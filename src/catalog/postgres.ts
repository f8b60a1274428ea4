// Relational database A (SPEC.md 2.5): the official postgres image's environment contract.
import type { ServiceKind } from './catalog.js';
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
