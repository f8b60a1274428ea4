// What a new user sees at the terminal: `svc` alone is help (never a second daemon), and `svc serve`
// names the address to open, the setup wizard's on a first start.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { openUrl, readyLine } from '../../../src/cli/open-url.js';

const repo = resolve(import.meta.dirname, '../../..');

describe('first start', () => {
  it('svc with no arguments prints the help and exits 0', async () => {
    const r = await new Promise<{ code: number; stdout: string }>((done) =>
      execFile(join(repo, 'node_modules/.bin/tsx'), [join(repo, 'src/cli.ts')], { env: { PATH: process.env.PATH, SVC_DATA_DIR: '/nonexistent/svc-no-args' }, timeout: 30_000 }, (err, stdout) =>
        done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
      ),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: svc COMMAND/);
    expect(r.stdout).toContain('uninstall');
  }, 40_000);

  it('the ready line names the address to open, and the setup wizard while no admin exists', () => {
    const base = { host: '0.0.0.0', port: 3000, externalIps: ['10.1.2.3', '192.168.0.2'] };
    expect(openUrl(base)).toBe('http://10.1.2.3:3000/');
    expect(openUrl({ ...base, externalIps: [] })).toBe('http://127.0.0.1:3000/');
    expect(openUrl({ ...base, host: '::1' })).toBe('http://[::1]:3000/');
    expect(openUrl({ ...base, publicUrl: 'https://svc.example.com/' })).toBe('https://svc.example.com/');
    expect(readyLine({ ...base, setupRequired: true })).toBe('svc is ready: open http://10.1.2.3:3000/setup to create the first admin account (then http://10.1.2.3:3000/)\n');
    expect(readyLine({ ...base, setupRequired: false })).toBe('svc is ready: open http://10.1.2.3:3000/\n');
  });
});
