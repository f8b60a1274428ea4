// `svc uninstall` against the real engine: it refuses while the daemon of the data directory holds its
// database; then it leaves nothing of the instance (containers, network, detached helpers) and touches
// no container of another instance; --purge deletes the data directory only when confirmed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { openDb } from '../../src/store/db.js';
import { storeInstance } from '../../src/store/instance.js';
import { processArgs, spawnGuarded, stopHelpersOf } from '../../src/proxy/detached.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const repo = resolve(import.meta.dirname, '../..');
const suffix = randomBytes(3).toString('hex');
const A = `svc-una${suffix}`;
const B = `svc-unb${suffix}`;
const ra = createDockerRuntime({ log: silentLogger, instance: A });
const rb = createDockerRuntime({ log: silentLogger, instance: B });
let dataDir: string;
let holder: ChildProcess | undefined;

function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      join(repo, 'node_modules/.bin/tsx'),
      [join(repo, 'src/cli.ts'), ...args],
      { cwd: dataDir, env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_DATA_DIR: dataDir, SVC_BIN_DIR: dataDir }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const labelsOf = (instance: string) => ({ [LABELS.managed]: 'true', [LABELS.instance]: instance });
const networkExists = async (name: string) => (await ra.docker.listNetworks({ filters: { name: [name] } })).some((n) => n.Name === name);

beforeAll(async () => {
  await ensureTestImages();
  dataDir = mkdtempSync(join(tmpdir(), 'svc-uninstall-'));
  const db = openDb(join(dataDir, 'svc.db'));
  storeInstance(db, A);
  db.$client.close();
  await ra.ensureNetwork(A);
  await ra.run({ name: `${A}-web`, image: WEB_V1, labels: labelsOf(A), network: A });
  await ra.run({ name: `${A}-stopped`, image: WEB_V1, labels: labelsOf(A), network: A });
  await ra.stop(`${A}-stopped`, 0);
  await rb.run({ name: `${B}-web`, image: WEB_V1, labels: labelsOf(B) });
}, 120_000);

afterAll(async () => {
  holder?.kill('SIGKILL');
  for (const [r, n] of [[ra, `${A}-web`], [ra, `${A}-stopped`], [rb, `${B}-web`]] as const) await r.remove(n).catch(() => {});
  await ra.docker.getNetwork(A).remove().catch(() => {});
  if (dataDir) {
    await stopHelpersOf(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('svc uninstall', () => {
  it('refuses while the daemon of the data directory runs, and changes nothing', async () => {
    // Any process holding svc.db open is that data directory's daemon.
    holder = spawn('/bin/sh', ['-c', 'exec 3<"$0"; exec sleep 120', join(dataDir, 'svc.db')], { stdio: 'ignore' });
    await waitFor(() => processArgs(holder!.pid!)?.includes('sleep'), { what: 'the holder to run' });
    const r = await svc(['uninstall']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the svc daemon of ${dataDir} runs (pid ${holder.pid})`);
    expect(r.stderr).toContain('stop it first');
    expect((await ra.inspect(`${A}-web`))?.running).toBe(true);
    holder.kill('SIGKILL');
    await waitFor(() => !processArgs(holder!.pid!), { what: 'the holder to end' });
  }, 60_000);

  it('removes every container, the network and the helpers of the instance, and nothing of another', async () => {
    mkdirSync(join(dataDir, 'proxy', 'dns'), { recursive: true });
    const helper = spawnGuarded({
      guardDir: join(dataDir, 'proxy', 'dns'),
      command: 'tail',
      args: ['-f', join(dataDir, 'proxy', 'helper.log')],
      logFile: join(dataDir, 'proxy', 'helper.log'),
    });
    await waitFor(() => processArgs(helper.pid!), { what: 'the guard to run' });
    const r = await svc(['uninstall']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`removed container ${A}-web`);
    expect(r.stdout).toContain(`removed network ${A}`);
    expect(await ra.list({ [LABELS.instance]: A })).toEqual([]);
    expect(await networkExists(A)).toBe(false);
    expect(processArgs(helper.pid!)).toBeUndefined();
    expect((await rb.inspect(`${B}-web`))?.running).toBe(true);
    expect(existsSync(join(dataDir, 'svc.db'))).toBe(true);
  }, 90_000);

  it('--purge deletes the data directory only when confirmed', async () => {
    const unconfirmed = await svc(['uninstall', '--purge']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('confirm with --yes');
    expect(existsSync(join(dataDir, 'svc.db'))).toBe(true);
    const r = await svc(['uninstall', '--purge', '--yes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`deleted ${dataDir}`);
    expect(existsSync(dataDir)).toBe(false);
    expect((await rb.inspect(`${B}-web`))?.running).toBe(true);
  }, 60_000);
});
