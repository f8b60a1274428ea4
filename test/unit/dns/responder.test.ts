// The responder on a real loopback UDP socket (port 0) with a real state file in a temp dir.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startResponder, type Responder } from '../../../src/dns/responder.js';
import { queryDns, probeDnsResponder, writeDnsRecords } from '../../../src/dns/state.js';
import { RCODE, TYPE } from '../../../src/dns/records.js';
import { waitFor } from '../../support/wait.js';

let dir: string | undefined;
let r: Responder | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

const answerOf = async (port: number, name: string) => {
  const res = await queryDns(port, name, TYPE.A);
  return res && (res.answers[0] ? [...res.answers[0].data].join('.') : `rcode ${res.rcode}`);
};

describe('dns responder', () => {
  it('answers from the state file and follows its changes', async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-dns-'));
    const file = join(dir, 'dns.json');
    await writeDnsRecords(file, { 'web.svc.internal.': '10.0.0.2' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    r = await startResponder({ stateFile: file, port: 0, statIntervalMs: 200 });
    expect(await answerOf(r.port, 'web.svc.internal.')).toBe('10.0.0.2');
    expect(await answerOf(r.port, 'api.svc.internal.')).toBe(`rcode ${RCODE.NXDOMAIN}`);
    const aaaa = await queryDns(r.port, 'web.svc.internal.', TYPE.AAAA);
    expect(aaaa).toMatchObject({ rcode: RCODE.NOERROR, answers: [] });

    await writeDnsRecords(file, { 'web.svc.internal.': '10.0.0.3', 'api.svc.internal.': '10.0.0.4' });
    await waitFor(async () => (await answerOf(r!.port, 'web.svc.internal.')) === '10.0.0.3', { timeoutMs: 3000, what: 'new answer' });
    expect(await answerOf(r.port, 'api.svc.internal.')).toBe('10.0.0.4');
    expect(await probeDnsResponder(r.port)).toEqual({ answered: true, stateFile: file });
  });

  it('starts with no file, keeps the last good records when the file turns invalid', async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-dns-'));
    const file = join(dir, 'dns.json');
    r = await startResponder({ stateFile: file, port: 0, statIntervalMs: 100 });
    expect(await answerOf(r.port, 'web.svc.internal.')).toBe(`rcode ${RCODE.NXDOMAIN}`);
    await writeDnsRecords(file, { 'web.svc.internal.': '10.0.0.2' });
    await waitFor(async () => (await answerOf(r!.port, 'web.svc.internal.')) === '10.0.0.2', { timeoutMs: 3000, what: 'first answer' });
    await writeFile(file, '{ not json');
    await r.reload();
    expect(await answerOf(r.port, 'web.svc.internal.')).toBe('10.0.0.2');
  });

  it('probe says nobody answers on a closed port', async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-dns-'));
    const tmp = await startResponder({ stateFile: join(dir, 'x.json'), port: 0 });
    const port = tmp.port;
    await tmp.close();
    expect(await probeDnsResponder(port, 150)).toEqual({ answered: false });
  });
});
