// API.md "Configuration" (end): a DNS port held by another live instance stops the start with one line
// naming SVC_DNS_PORT, instead of a daemon that deploys `success` while its apps resolve nowhere.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { startDaemon, type Daemon } from '../../src/main.js';
import { dnsResponderPid } from '../../src/dns/supervise.js';
import { processArgs, stopHelpersOf } from '../../src/proxy/detached.js';
import { isolatedDaemonEnv, removeInstance, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';

let first: TestDaemon | undefined;
let second: Daemon | undefined;
const dirs: string[] = [];

afterAll(async () => {
  await second?.stop().catch(() => {});
  await removeInstance(`test-dnsport-b-${process.pid}`, `svc-test-dnsport-b-${process.pid}`).catch(() => {});
  for (const d of dirs) {
    await stopHelpersOf(d).catch(() => {});
    await rm(d, { recursive: true, force: true });
  }
  await first?.close();
});

describe('SVC_DNS_PORT held by another live instance', () => {
  it('stops the start with one line naming SVC_DNS_PORT', async () => {
    first = await startTestDaemon('dnsport-a');
    const pid = await waitFor(() => dnsResponderPid(first!.dataDir), { timeoutMs: 10_000, what: "the first instance's responder" });
    const port = processArgs(pid)!.find((a) => a.startsWith('--port='))!.slice('--port='.length);

    const dataDir = await mkdtemp(join(tmpdir(), 'svc-test-dnsport-b-'));
    dirs.push(dataDir);
    const env = await isolatedDaemonEnv({ dataDir, caddyAdminUrl: first.caddy.adminUrl, network: `svc-test-dnsport-b-${process.pid}`, instance: `test-dnsport-b-${process.pid}` });
    const config = parseConfig({ ...env, SVC_DNS_PORT: port }, join(dataDir, '.env'));
    const err = await startDaemon(config, silentLogger).then(
      (d) => ((second = d), undefined),
      (e: Error) => e,
    );
    expect(err?.message).toMatch(new RegExp(`^SVC_DNS_PORT ${port} is used by the DNS responder of another svc instance \\(serving ${first.dataDir}`));
    expect(err?.message).not.toContain('\n');
    // The first instance's responder is untouched.
    expect(dnsResponderPid(first.dataDir)).toBe(pid);
  });
});
