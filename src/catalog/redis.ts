// Key-value cache (SPEC.md 2.5): redis with a password and an append-only file under /data.
import type { ServiceKind } from './catalog.js';
import { randomPassword } from './random.js';
import { redisCopyFrom, redisUpgrade } from './redis-upgrade.js';

const PORT = 6379;

export const redis: ServiceKind = {
  type: 'redis',
  officialImage: (v) => `redis:${v}-alpine`,
  internalPort: PORT,
  dataPath: '/data',
  generateCredentials: () => ({ password: randomPassword() }),
  container: (c) => ({ env: {}, cmd: ['redis-server', '--requirepass', c.password, '--appendonly', 'yes', '--dir', '/data'] }),
  // redis-cli exits 0 on NOAUTH too, so the answer itself must be PONG. REDISCLI_AUTH keeps it out of argv.
  readiness: (c) => ({
    kind: 'exec',
    tcpPort: PORT,
    exec: { cmd: ['redis-cli', '-h', '127.0.0.1', '-p', String(PORT), 'ping'], env: { REDISCLI_AUTH: c.password } },
    expect: 'PONG',
  }),
  credentialFields: (c, place) => ({ host: place.host, port: PORT, password: c.password }),
  envPrefix: 'CACHE',
  envFields: [
    ['HOST', 'host'],
    ['PORT', 'port'],
    ['PASSWORD', 'password'],
  ],
  upgrade: redisUpgrade,
  copyFrom: redisCopyFrom,
};
