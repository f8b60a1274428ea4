// The pure parts of `svc login`: the login file's path, text and parsing, its modes on disk, and which
// URL and token a command uses (environment, then .env, then the login file; the file's token only to its URL).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatLoginFile, loginFilePath, parseLoginFile, readLoginFile, writeLoginFile, type LoginFile } from '../../../src/cli/login-file.js';
import { resolveSettings } from '../../../src/cli/client.js';
import { loginUrl, tokenName } from '../../../src/cli/login.js';

const file: LoginFile = { url: 'https://svc.example.com', token: 'svc_abc', token_id: 7, user: 'me@example.com' };

describe('the login file', () => {
  it('lives in $XDG_CONFIG_HOME/svc/config when that is absolute, else ~/.config/svc/config', () => {
    expect(loginFilePath({ HOME: '/home/me' })).toBe('/home/me/.config/svc/config');
    expect(loginFilePath({ HOME: '/home/me', XDG_CONFIG_HOME: '/cfg' })).toBe('/cfg/svc/config');
    expect(loginFilePath({ HOME: '/home/me', XDG_CONFIG_HOME: 'relative' })).toBe('/home/me/.config/svc/config');
    expect(loginFilePath({})).toBeUndefined();
  });

  it('is JSON that parses back to what was written; a broken one says what is wrong, never the token', () => {
    const text = formatLoginFile(file);
    expect(JSON.parse(text)).toEqual({ url: 'https://svc.example.com', token: 'svc_abc', token_id: 7, user: 'me@example.com' });
    expect(parseLoginFile(text)).toEqual(file);
    expect(parseLoginFile('{"url":"https://x/","token":"t","token_id":1}')).toEqual({ url: 'https://x', token: 't', token_id: 1, user: '' });
    const bad = ['nope', '[]', '{"url":"ftp://x","token":"t","token_id":1}', '{"url":"http://x","token_id":1}', '{"url":"http://x","token":"svc_secret"}'];
    for (const b of bad) {
      const r = parseLoginFile(b);
      expect(r, b).toBeInstanceOf(Error);
      expect((r as Error).message).not.toContain('svc_secret');
    }
  });

  it('is written with mode 600 in a directory of mode 700, replacing an older one', () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-login-'));
    try {
      const path = loginFilePath({ HOME: home })!;
      expect(readLoginFile(path)).toBeUndefined();
      writeLoginFile(path, { ...file, token: 'old' });
      writeLoginFile(path, file);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(home, '.config', 'svc')).mode & 0o777).toBe(0o700);
      expect(readLoginFile(path)).toEqual(file);
      expect(readFileSync(path, 'utf8')).toBe(formatLoginFile(file));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('which URL and token a command uses', () => {
  const none = {};
  it('without anything: the default URL and no token', () => {
    expect(resolveSettings({}, none, undefined)).toEqual({ url: 'http://127.0.0.1:3000', token: undefined, from: { url: 'default', token: undefined } });
    expect(resolveSettings({}, { SVC_PORT: '4100' }, undefined).url).toBe('http://127.0.0.1:4100');
  });

  it('the login file when neither the environment nor .env names them', () => {
    expect(resolveSettings({}, { SVC_PORT: '4100' }, file)).toEqual({ url: 'https://svc.example.com', token: 'svc_abc', from: { url: 'login', token: 'login' } });
  });

  it('SVC_URL and SVC_TOKEN of the environment win, then those of .env', () => {
    expect(resolveSettings({ SVC_URL: 'http://a/', SVC_TOKEN: 'env' }, { SVC_URL: 'http://b', SVC_TOKEN: 'dot' }, file)).toEqual({
      url: 'http://a',
      token: 'env',
      from: { url: 'environment', token: 'environment' },
    });
    expect(resolveSettings({}, { SVC_URL: 'http://b', SVC_TOKEN: 'dot' }, file)).toMatchObject({ url: 'http://b', token: 'dot', from: { url: '.env', token: '.env' } });
    // A token of the environment with the login's URL: the environment's token, to that URL.
    expect(resolveSettings({ SVC_TOKEN: 'env' }, none, file)).toMatchObject({ url: 'https://svc.example.com', token: 'env', from: { url: 'login', token: 'environment' } });
  });

  it("never sends the login's token to another daemon", () => {
    expect(resolveSettings({ SVC_URL: 'http://other:3000' }, none, file)).toMatchObject({ url: 'http://other:3000', token: undefined });
    expect(resolveSettings({}, { SVC_URL: 'http://other:3000' }, file).token).toBeUndefined();
    expect(resolveSettings({ SVC_URL: 'https://svc.example.com/' }, none, file)).toMatchObject({ token: 'svc_abc', from: { url: 'environment', token: 'login' } });
  });
});

describe('svc login', () => {
  const current = resolveSettings({}, {}, undefined);
  it('logs in to the argument, else the current URL; anything but http(s) is a usage error', () => {
    expect(loginUrl('https://svc.example.com/', current)).toBe('https://svc.example.com');
    expect(loginUrl(undefined, current)).toBe('http://127.0.0.1:3000');
    expect(loginUrl(undefined, resolveSettings({}, {}, file))).toBe('https://svc.example.com');
    expect(() => loginUrl('svc.example.com', current)).toThrow(expect.objectContaining({ exitCode: 2 }));
  });

  it('names its token after the host', () => {
    expect(tokenName('build-01')).toBe('svc-cli@build-01');
  });
});
