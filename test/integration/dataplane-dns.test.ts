// The DNS responder for real: Debian's dnsmasq started detached by ensureDnsResponder, answering from the
// hosts directory svc writes; a responder whose data directory is gone stops by itself or is taken over,
// and a live responder of another data directory is a conflict that names it.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dnsmasqPaths, hostsDirArg } from '../../src/dns/dnsmasq.js';
import { readFileSync } from 'node:fs';
import { writeHostsDir } from '../../src/dns/hosts.js';
import { askDns, probeDnsResponder, resolveA } from '../../src/dns/query.js';
import { dnsResponderPid, ensureDnsResponder } from '../../src/dns/supervise.js';
import { pidsWithArg, processArgs, stopHelpersOf } from '../../src/proxy/detached.js';
import { silentLogger } from '../../src/log.js';
import { freePort } from '../support/caddy.js';
import { waitFor } from '../support/wait.js';

const dirs: string[] = [];
async function dataDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'svc-test-dpdns-'));
  dirs.push(d);
  return d;
}

/** Seconds since a process started (/proc/<pid>/stat field 22, in clock ticks of 1/100 s). */
function uptimeSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / 100;
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) - started;
}

afterAll(async () => {
  for (const d of dirs) {
    await stopHelpersOf(d);
    await rm(d, { recursive: true, force: true });
  }
});

describe('dnsmasq as the responder', () => {
  it('answers A from the hosts files, NODATA for AAAA, NXDOMAIN for unknown names, and follows changes at once', async () => {
    const dir = await dataDir();
    const port = await freePort();
    const { hostsDir } = dnsmasqPaths(dir);
    await writeHostsDir(hostsDir, { 'web.svc.internal.': '10.1.2.3' });
    expect(await ensureDnsResponder({ dataDir: dir, port, log: silentLogger })).toMatchObject({ started: true });
    expect(await resolveA(port, 'web.svc.internal.')).toBe('10.1.2.3');
    expect(await askDns(port, 'web.svc.internal.', 'AAAA')).toEqual({ answered: true, records: [], code: 'ENODATA' });
    expect(await askDns(port, 'nope.svc.internal.', 'A')).toEqual({ answered: true, records: [], code: 'ENOTFOUND' });
    expect(await askDns(port, 'example.com.', 'A')).toEqual({ answered: true, records: [], code: 'EREFUSED' });

    await writeHostsDir(hostsDir, { 'web.svc.internal.': '10.1.2.4', 'api.svc.internal.': '10.1.2.5' });
    await waitFor(async () => (await resolveA(port, 'web.svc.internal.')) === '10.1.2.4', { timeoutMs: 2000, what: 'replaced record' });
    expect(await resolveA(port, 'api.svc.internal.')).toBe('10.1.2.5');
    await writeHostsDir(hostsDir, { 'api.svc.internal.': '10.1.2.5' });
    await waitFor(async () => (await askDns(port, 'web.svc.internal.', 'A')).code === 'ENOTFOUND', { timeoutMs: 2000, what: 'removed record' });

    // Found again by its pid file: nothing new is started.
    const pid = dnsResponderPid(dir);
    expect(pid).toBeGreaterThan(1);
    expect(processArgs(pid!)?.[0]).toContain('dnsmasq');
    expect(await ensureDnsResponder({ dataDir: dir, port, log: silentLogger })).toEqual({ started: false, pid });
  });

  it('a killed responder is started again by its guard at once, or with its guard by the next ensure', async () => {
    const dir = await dataDir();
    const port = await freePort();
    const { hostsDir } = dnsmasqPaths(dir);
    await writeHostsDir(hostsDir, { 'web.svc.internal.': '10.1.2.3' });
    await ensureDnsResponder({ dataDir: dir, port, log: silentLogger });
    // The guard restarts a helper that had been running (one that dies at once is left to the daemon).
    const first = dnsResponderPid(dir)!;
    await waitFor(() => uptimeSeconds(first) > 2.5, { timeoutMs: 10_000, what: 'dnsmasq up for a while' });
    process.kill(first, 'SIGKILL');
    const second = await waitFor(() => { const p = dnsResponderPid(dir); return p !== first ? p : undefined; }, { timeoutMs: 2000, what: 'dnsmasq restarted by its guard' });
    expect(await resolveA(port, 'web.svc.internal.')).toBe('10.1.2.3');

    // Guard and dnsmasq killed together: the next ensure (the proxy reconciler's probe) starts both.
    for (const pid of pidsWithArg(hostsDirArg(hostsDir))) process.kill(pid, 'SIGKILL');
    await waitFor(() => processArgs(second) === undefined && dnsResponderPid(dir) === undefined, { timeoutMs: 2000, what: 'responder gone' });
    expect(await ensureDnsResponder({ dataDir: dir, port, log: silentLogger })).toMatchObject({ started: true });
    expect(await resolveA(port, 'web.svc.internal.')).toBe('10.1.2.3');
  });

  it('a responder whose data directory was deleted stops by itself', async () => {
    const dir = await dataDir();
    const port = await freePort();
    await ensureDnsResponder({ dataDir: dir, port, log: silentLogger });
    const pid = dnsResponderPid(dir)!;
    await rm(dir, { recursive: true, force: true });
    await waitFor(() => processArgs(pid) === undefined, { timeoutMs: 15_000, what: 'the stale responder to exit' });
    expect((await probeDnsResponder(port, 100)).answered).toBe(false);
  });

  it('a new data directory takes over the port from a responder whose directory is gone; another live one is a conflict', async () => {
    const port = await freePort();
    const old = await dataDir();
    await ensureDnsResponder({ dataDir: old, port, log: silentLogger });

    // A live responder of another existing data directory: a clear error naming it.
    const other = await dataDir();
    await expect(ensureDnsResponder({ dataDir: other, port, log: silentLogger })).rejects.toThrow(
      new RegExp(`another svc instance \\(serving ${dnsmasqPaths(old).hostsDir}, pid \\d+`),
    );

    // The old directory deleted: taken over at once, without waiting for its guard.
    const oldPid = dnsResponderPid(old)!;
    await rm(old, { recursive: true, force: true });
    await writeHostsDir(dnsmasqPaths(other).hostsDir, { 'web.svc.internal.': '10.7.7.7' });
    expect(await ensureDnsResponder({ dataDir: other, port, log: silentLogger })).toMatchObject({ started: true });
    expect(processArgs(oldPid)).toBeUndefined();
    expect(await resolveA(port, 'web.svc.internal.')).toBe('10.7.7.7');
  });
});
