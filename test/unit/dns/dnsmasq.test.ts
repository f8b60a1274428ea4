// The pure parts of running dnsmasq: its arguments, the identity TXT and how a probe's TXT is read back.
import { describe, expect, it } from 'vitest';
import { dnsmasqArgs, dnsmasqPaths, identityText, servedPath } from '../../../src/dns/dnsmasq.js';

describe('dnsmasq', () => {
  const paths = dnsmasqPaths('/var/lib/svc');

  it('keeps every file under <data>/proxy', () => {
    expect(paths).toEqual({
      hostsDir: '/var/lib/svc/proxy/dns',
      pidFile: '/var/lib/svc/proxy/dnsmasq.pid',
      logFile: '/var/lib/svc/proxy/dnsmasq.log',
      legacyStateFile: '/var/lib/svc/proxy/dns-records.json',
    });
  });

  it('answers only svc.internal from the hosts dir, on loopback, as our user, in the foreground', () => {
    const args = dnsmasqArgs(paths, 15353, 'svc');
    expect(args).toEqual(
      expect.arrayContaining([
        '--conf-file=/dev/null',
        '--keep-in-foreground',
        '--port=15353',
        '--listen-address=127.0.0.1',
        '--bind-interfaces',
        '--no-resolv',
        '--no-hosts',
        '--local=/svc.internal/',
        '--hostsdir=/var/lib/svc/proxy/dns',
        '--pid-file=/var/lib/svc/proxy/dnsmasq.pid',
        '--user=svc',
      ]),
    );
    expect(args.find((a) => a.startsWith('--txt-record='))).toBe(`--txt-record=_svc-responder.svc.internal,${identityText(paths.hostsDir)}`);
  });

  it.each([
    ['/var/lib/svc/proxy/dns'],
    ['/tmp/a,b "c"/proxy/dns'],
    [`/${'x'.repeat(300)}/proxy/dns`],
  ])('the identity of %s comes back intact through dnsmasq TXT strings', (dir) => {
    const text = identityText(dir);
    for (const chunk of text.split(',')) expect(chunk.length).toBeLessThanOrEqual(255);
    // dnsmasq makes one string per comma-separated part; a reader concatenates them.
    expect(servedPath(text.split(',').join(''))).toBe(dir);
  });

  it.each([
    ['/data/proxy/dns-records.json', '/data/proxy/dns-records.json'], // the earlier Node responder
    [undefined, undefined],
    ['hello', undefined],
    ['abc', undefined],
  ])('a probe TXT of %s serves %s', (txt, served) => expect(servedPath(txt)).toBe(served));
});
