import { describe, it, expect } from 'vitest';
import { dataPathOf, envKeys, imageFor, injectedEnv, isServiceType, kindOf, serviceContainerName, type ServicePlace } from '../../../src/catalog/catalog.js';
import { bucketFor, garageToml } from '../../../src/catalog/garage.js';
import { randomPassword } from '../../../src/catalog/random.js';

const images = { postgres: 'pg-img', mysql: 'my-img', redis: 'rd-img', garage: 'gg-img' };
const place = (name: string): ServicePlace => ({ name, host: serviceContainerName('svc', name), dataDir: `/d/services/${name}` });

describe('catalog entries', () => {
  it.each([
    ['postgres', 'pg-img', 5432, '/var/lib/postgresql/data'],
    ['mysql', 'my-img', 3306, '/var/lib/mysql'],
    ['redis', 'rd-img', 6379, '/data'],
    ['garage', 'gg-img', 3900, '/data'],
  ] as const)('%s: image from config, port %i, data path %s', (type, image, port, path) => {
    const k = kindOf(type);
    expect(imageFor(k, images, '1').image).toBe(image);
    expect(k.internalPort).toBe(port);
    expect(k.dataPath).toBe(path);
  });

  it.each([
    ['postgres', '17', {}, 'postgres:17', 'official'],
    ['postgres', '18', { postgres: 'pg-any' }, 'pg-any', 'type'],
    ['postgres', '17', { postgres: 'pg-any', byVersion: { 'postgres:17': 'pg-17' } }, 'pg-17', 'version'],
    ['postgres', '16', { postgres: 'pg-any', byVersion: { 'postgres:17': 'pg-17' } }, 'pg-any', 'type'],
    ['mysql', '8.4', { byVersion: { 'mysql:8.4': 'my-84' } }, 'my-84', 'version'],
    ['mysql', '8.0', {}, 'mysql:8.0', 'official'],
    ['redis', '8', {}, 'redis:8-alpine', 'official'],
    ['garage', '1', {}, 'dxflrs/garage:v1.0.1', 'official'],
  ] as const)('%s %s: the version variable wins over the type variable over the official image', (type, version, imgs, image, source) => {
    expect(imageFor(kindOf(type), imgs, version)).toEqual({ image, source });
  });

  it('postgres 18 keeps its data at /var/lib/postgresql/18/docker (its image refuses a mount at .../data); earlier ones at .../data', () => {
    expect(dataPathOf(kindOf('postgres'), '18')).toBe('/var/lib/postgresql/18/docker');
    expect(kindOf('postgres').container({ user: 'u', password: 'p', database: 'd' }, place('x'), '18').env.PGDATA).toBe('/var/lib/postgresql/18/docker');
    expect(dataPathOf(kindOf('postgres'), '17')).toBe('/var/lib/postgresql/data');
    expect(dataPathOf(kindOf('redis'), '8')).toBe('/data');
  });

  it('knows exactly the four types', () => {
    expect(['postgres', 'mysql', 'redis', 'garage'].every(isServiceType)).toBe(true);
    expect(isServiceType('mongo')).toBe(false);
  });

  it.each([
    ['postgres', ['host', 'port', 'database', 'user', 'password']],
    ['mysql', ['host', 'port', 'database', 'user', 'password']],
    ['redis', ['host', 'port', 'password']],
    ['garage', ['endpoint', 'region', 'access_key', 'secret_key', 'bucket']],
  ] as const)('%s exposes the SPEC.md 2.5 credential fields and nothing else', (type, fields) => {
    const k = kindOf(type);
    const creds = k.generateCredentials('db1');
    const shown = k.credentialFields(creds, place('db1'));
    expect(Object.keys(shown)).toEqual(fields);
    if ('host' in shown) expect(shown.host).toBe('svc-svc-db1');
    if ('port' in shown) expect(shown.port).toBe(k.internalPort);
  });

  it('mysql keeps a root password that is not among the shown fields', () => {
    const k = kindOf('mysql');
    const creds = k.generateCredentials('m');
    expect(creds.root_password).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{42}$/);
    expect(Object.values(k.credentialFields(creds, place('m')))).not.toContain(creds.root_password);
    expect(k.container(creds, place('m')).env).toEqual({
      MYSQL_ROOT_PASSWORD: creds.root_password, MYSQL_DATABASE: 'app', MYSQL_USER: 'svc', MYSQL_PASSWORD: creds.password,
    });
  });

  it('generates different strong URL-safe passwords each time', () => {
    const seen = new Set(Array.from({ length: 200 }, () => randomPassword()));
    expect(seen.size).toBe(200);
    for (const p of seen) expect(p).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{42}$/);
    expect(kindOf('postgres').generateCredentials('a').password).not.toBe(kindOf('postgres').generateCredentials('a').password);
  });
});

describe('containers and readiness', () => {
  it('postgres: env contract, pg_isready as the user over TCP', () => {
    const k = kindOf('postgres');
    const c = k.generateCredentials('p');
    expect(k.container(c, place('p'), '17')).toEqual({ env: { POSTGRES_USER: 'svc', POSTGRES_PASSWORD: c.password, POSTGRES_DB: 'app', PGDATA: '/var/lib/postgresql/data' } });
    const r = k.readiness(c);
    expect(r).toEqual({ kind: 'exec', tcpPort: 5432, exec: { cmd: ['pg_isready', '-U', 'svc', '-d', 'app', '-h', '127.0.0.1', '-p', '5432'] } });
  });
  it('mysql: mysqladmin ping as root with the password in MYSQL_PWD, never in argv', () => {
    const k = kindOf('mysql');
    const c = k.generateCredentials('m');
    const r = k.readiness(c);
    expect(r.kind).toBe('exec');
    if (r.kind !== 'exec') return;
    expect(r.exec.cmd.slice(0, 3)).toEqual(['mysqladmin', 'ping', '-uroot']);
    expect(r.exec.cmd.join(' ')).not.toContain(c.root_password);
    expect(r.exec.env).toEqual({ MYSQL_PWD: c.root_password });
  });
  it('redis: requirepass and AOF under /data; redis-cli ping with REDISCLI_AUTH expecting PONG', () => {
    const k = kindOf('redis');
    const c = k.generateCredentials('r');
    expect(k.container(c, place('r')).cmd).toEqual(['redis-server', '--requirepass', c.password, '--appendonly', 'yes', '--dir', '/data']);
    const r = k.readiness(c);
    expect(r).toEqual({ kind: 'exec', tcpPort: 6379, exec: { cmd: ['redis-cli', '-h', '127.0.0.1', '-p', '6379', 'ping'], env: { REDISCLI_AUTH: c.password } }, expect: 'PONG' });
  });
  it('garage: HTTP /health on 3900, config file mounted read-only at /etc/garage.toml', () => {
    const k = kindOf('garage');
    const c = k.generateCredentials('objs');
    expect(k.readiness(c)).toEqual({ kind: 'http', port: 3900, path: '/health' });
    expect(k.container(c, place('objs')).extraMounts).toEqual([{ source: '/d/services/objs/garage.toml', target: '/etc/garage.toml', readOnly: true }]);
    expect(k.provisionsOnce).toBe(true);
    // The key is generated with the credentials, in the form Garage imports.
    expect(c.access_key).toMatch(/^GK[0-9a-f]{24}$/);
    expect(c.secret_key).toMatch(/^[0-9a-f]{64}$/);
    expect(c.rpc_secret).toMatch(/^[0-9a-f]{64}$/);
  });
  it('garage.toml: single node, region garage, ports 3900/3901/3903, everything under /data', () => {
    const toml = garageToml({ rpc_secret: 'ab'.repeat(32), admin_token: 'tok' });
    for (const line of [
      'metadata_dir = "/data/meta"', 'data_dir = "/data/data"', 'replication_factor = 1', 'rpc_bind_addr = "[::]:3901"',
      `rpc_secret = "${'ab'.repeat(32)}"`, '[s3_api]', 's3_region = "garage"', 'api_bind_addr = "[::]:3900"', '[admin]',
      'api_bind_addr = "[::]:3903"', 'admin_token = "tok"',
    ]) expect(toml.split('\n')).toContain(line);
    expect(kindOf('garage').files!({ rpc_secret: 'x', admin_token: 'y' })[0]).toMatchObject({ path: 'garage.toml', mode: 0o600 });
  });
  it('bucket names are at least 3 characters', () => {
    expect(bucketFor('ab')).toBe('ab-bucket');
    expect(bucketFor('media')).toBe('media');
  });
});

describe('injected variables', () => {
  it.each([
    ['postgres', null, ['SQLA_HOST', 'SQLA_PORT', 'SQLA_DB', 'SQLA_USER', 'SQLA_PASSWORD']],
    ['postgres', 'DB', ['DB_HOST', 'DB_PORT', 'DB_DB', 'DB_USER', 'DB_PASSWORD']],
    ['mysql', null, ['SQLB_HOST', 'SQLB_PORT', 'SQLB_DATABASE', 'SQLB_USER', 'SQLB_PASSWORD']],
    ['mysql', 'DB', ['DB_HOST', 'DB_PORT', 'DB_DATABASE', 'DB_USER', 'DB_PASSWORD']],
    ['redis', null, ['CACHE_HOST', 'CACHE_PORT', 'CACHE_PASSWORD']],
    ['redis', 'SESSIONS', ['SESSIONS_HOST', 'SESSIONS_PORT', 'SESSIONS_PASSWORD']],
    ['garage', null, ['OBJSTORE_ENDPOINT', 'OBJSTORE_REGION', 'OBJSTORE_ACCESS_KEY', 'OBJSTORE_SECRET_KEY', 'OBJSTORE_BUCKET']],
    ['garage', 'S3', ['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY', 'S3_SECRET_KEY', 'S3_BUCKET']],
  ] as const)('%s alias %s', (type, alias, keys) => {
    expect(envKeys(kindOf(type), alias)).toEqual(keys);
  });

  it('values: host is the container name, the rest are the credential values', () => {
    const k = kindOf('postgres');
    const c = k.generateCredentials('main');
    expect(injectedEnv(k, c, place('main'))).toEqual({
      SQLA_HOST: 'svc-svc-main', SQLA_PORT: '5432', SQLA_DB: 'app', SQLA_USER: 'svc', SQLA_PASSWORD: c.password,
    });
    const g = kindOf('garage');
    const gc = { ...g.generateCredentials('files'), access_key: 'GKabc', secret_key: 'sec' };
    expect(injectedEnv(g, gc, place('files'), 'S3')).toEqual({
      S3_ENDPOINT: 'http://svc-svc-files:3900', S3_REGION: 'garage', S3_ACCESS_KEY: 'GKabc', S3_SECRET_KEY: 'sec', S3_BUCKET: 'files',
    });
  });
});

describe('backup dumps', () => {
  it('postgres: pg_dumpall as the user; mysql: mysqldump of everything as root via MYSQL_PWD; none otherwise', () => {
    const pc = kindOf('postgres').generateCredentials('p');
    expect(kindOf('postgres').dump!(pc)).toEqual({ cmd: ['pg_dumpall', '-U', 'svc'], env: { PGPASSWORD: pc.password } });
    const mc = kindOf('mysql').generateCredentials('m');
    expect(kindOf('mysql').dump!(mc)).toEqual({
      cmd: ['mysqldump', '--all-databases', '--single-transaction', '-uroot'], env: { MYSQL_PWD: mc.root_password },
    });
    expect(kindOf('redis').dump).toBeUndefined();
    expect(kindOf('garage').dump).toBeUndefined();
  });
});
