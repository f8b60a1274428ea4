import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, loadConfig, ConfigError } from '../../src/config.js';

const key = Buffer.alloc(32, 3).toString('base64');

describe('parseConfig', () => {
  it('reads SVC_IMAGE_<TYPE>_<MAJOR> as one version\'s image and refuses a version svc does not offer', () => {
    const c = parseConfig({ SVC_ENCRYPTION_KEY: key, SVC_IMAGE_POSTGRES: 'pg:any', SVC_IMAGE_POSTGRES_17: 'pg:17', SVC_IMAGE_MYSQL_8_4: 'my:84' });
    expect(c.images).toMatchObject({ postgres: 'pg:any', byVersion: { 'postgres:17': 'pg:17', 'mysql:8.4': 'my:84' } });
    expect(() => parseConfig({ SVC_ENCRYPTION_KEY: key, SVC_IMAGE_POSTGRES_14: 'pg:14' })).toThrow(/SVC_IMAGE_POSTGRES_14: postgres is offered at versions 15, 16, 17, 18/);
  });

  it('applies the defaults of API.md', () => {
    const c = parseConfig({ SVC_ENCRYPTION_KEY: key });
    expect(c.port).toBe(3000);
    expect(c.dbPath.endsWith('data/svc.db')).toBe(true);
    expect(c.backupDir.endsWith('data/backups')).toBe(true);
    expect(c.proxy.mode).toBe('auto');
    expect(c.backup).toEqual({ intervalMinutes: 0, retainCount: 10 });
    expect(c.images).toEqual({ postgres: undefined, mysql: undefined, redis: undefined, garage: undefined, byVersion: {} }); // the official image of each version
    expect(c.encryptionKey.length).toBe(32);
  });

  it.each([
    ['SVC_PORT', 'abc'],
    ['SVC_PORT', '70000'],
    ['SVC_ENCRYPTION_KEY', 'not-base64!'],
    ['SVC_ENCRYPTION_KEY', Buffer.alloc(16).toString('base64')],
    ['SVC_PROXY_MODE', 'sidecar'],
    ['SVC_BACKUP_RETAIN_COUNT', '0'],
    ['SVC_DEBUG_ENDPOINTS', 'maybe'],
    ['SVC_PUBLIC_URL', 'not a url'],
  ])('refuses %s=%s with a line naming the variable', (name, value) => {
    const vars = { SVC_ENCRYPTION_KEY: key, [name]: value };
    expect(() => parseConfig(vars)).toThrow(ConfigError);
    expect(() => parseConfig(vars)).toThrow(new RegExp(name));
  });
});

describe('loadConfig', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-config-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates a missing key once, writes it to .env with mode 600, and reuses it', () => {
    const envFile = join(dir, '.env');
    writeFileSync(envFile, 'SVC_PORT=4000');
    const logs: string[] = [];
    const first = loadConfig({ envFile, env: {}, log: (m) => logs.push(m) });
    expect(first.port).toBe(4000);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(envFile, 'utf8')).toMatch(/^SVC_PORT=4000\nSVC_ENCRYPTION_KEY=/);
    expect(logs[0]).toMatch(/generated SVC_ENCRYPTION_KEY/);
    const second = loadConfig({ envFile, env: {} });
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
  });

  it('lets the environment override the file', () => {
    const envFile = join(dir, '.env');
    writeFileSync(envFile, `SVC_PORT=4000\nSVC_ENCRYPTION_KEY=${key}\n`);
    expect(loadConfig({ envFile, env: { SVC_PORT: '5000' } }).port).toBe(5000);
  });
});
