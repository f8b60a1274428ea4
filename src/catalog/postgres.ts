// Relational database A (SPEC.md 2.5): the official postgres image's environment contract.
import type { ServiceKind } from './catalog.js';
import { randomPassword } from './random.js';

const PORT = 5432;

export const postgres: ServiceKind = {
  type: 'postgres',
  image: (images) => images.postgres,
  internalPort: PORT,
  dataPath: '/var/lib/postgresql/data',
  generateCredentials: () => ({ user: 'svc', password: randomPassword(), database: 'app' }),
  container: (c) => ({ env: { POSTGRES_USER: c.user, POSTGRES_PASSWORD: c.password, POSTGRES_DB: c.database } }),
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
