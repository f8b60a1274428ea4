import { describe, expect, it } from 'vitest';
import { parseConfig, withInstance } from '../../../src/config.js';
import { containerName } from '../../../src/reconcilers/app/plan.js';
import { serviceContainerName } from '../../../src/catalog/catalog.js';
import { proxyContainerName } from '../../../src/proxy/container.js';

import { decideInstance, generateInstance, INSTANCE_RE, resolveInstance, storedInstance } from '../../../src/store/instance.js';
import { memoryDb, recordingEnqueue, testKey } from '../../support/db.js';
import { createApp } from '../../support/commands.js';

const gen = () => 'svc-new123';

describe('decideInstance', () => {
  it.each([
    ['an override wins and is stored on an empty database', { override: 'staging', hasState: false }, { instance: 'staging', source: 'SVC_INSTANCE', store: 'staging' }],
    ['an override wins over a stored identity, which stays', { override: 'staging', stored: 'svc-abc123', hasState: true }, { instance: 'staging', source: 'SVC_INSTANCE' }],
    ['the stored identity is kept', { stored: 'svc-abc123', hasState: true }, { instance: 'svc-abc123', source: 'database' }],
    ['a database from before identities (apps, none stored) keeps the legacy svc', { hasState: true }, { instance: 'svc', source: 'legacy', store: 'svc' }],
    ['an empty database gets a new identity', { hasState: false }, { instance: 'svc-new123', source: 'generated', store: 'svc-new123' }],
  ])('%s', (_, input, want) => expect(decideInstance({ ...input, generate: gen })).toEqual(want));
});

describe('generateInstance', () => {
  it('is svc- and six characters a container name and SVC_INSTANCE accept', () => {
    const made = Array.from({ length: 50 }, () => generateInstance());
    for (const m of made) expect(m).toMatch(/^svc-[a-z0-9]{6}$/);
    for (const m of made) expect(m).toMatch(INSTANCE_RE);
    expect(new Set(made).size).toBeGreaterThan(45);
  });
});

describe('resolveInstance', () => {
  it('generates once and keeps it across starts; a legacy database stays svc', () => {
    const fresh = memoryDb();
    const first = resolveInstance(fresh, undefined);
    expect(first.source).toBe('generated');
    expect(resolveInstance(fresh, undefined)).toEqual({ instance: first.instance, source: 'database' });
    expect(storedInstance(fresh)).toBe(first.instance);

    const legacy = memoryDb();
    createApp(legacy, recordingEnqueue(), { name: 'web', fallbackPort: 8080 }, 'rest');
    expect(resolveInstance(legacy, undefined)).toEqual({ instance: 'svc', source: 'legacy', store: 'svc' });
    expect(resolveInstance(legacy, undefined).instance).toBe('svc');
  });
});

describe('names and network follow the identity', () => {
  it('legacy svc keeps the contract names; another identity prefixes them and owns its network', () => {
    expect([containerName('svc', 'web', 3), serviceContainerName('svc', 'db'), proxyContainerName('svc')]).toEqual(['svc-web-3', 'svc-svc-db', 'svc-proxy']);
    expect([containerName('svc-k3x9q2', 'web', 3), serviceContainerName('svc-k3x9q2', 'db'), proxyContainerName('svc-k3x9q2')]).toEqual([
      'svc-k3x9q2-web-3',
      'svc-k3x9q2-svc-db',
      'svc-k3x9q2-proxy',
    ]);
    const key = testKey.toString('base64');
    const plain = parseConfig({ SVC_ENCRYPTION_KEY: key }, '/nonexistent/.env');
    expect(plain).toMatchObject({ instanceOverride: undefined, networkOverride: undefined });
    expect(withInstance(plain, 'svc-k3x9q2')).toMatchObject({ instance: 'svc-k3x9q2', network: 'svc-k3x9q2' });
    const pinned = parseConfig({ SVC_ENCRYPTION_KEY: key, SVC_INSTANCE: 'prod', SVC_NETWORK: 'shared' }, '/nonexistent/.env');
    expect(withInstance(pinned, 'prod')).toMatchObject({ instance: 'prod', network: 'shared', instanceOverride: 'prod' });
    expect(() => parseConfig({ SVC_ENCRYPTION_KEY: key, SVC_INSTANCE: '../x' }, '/nonexistent/.env')).toThrow(/SVC_INSTANCE/);
  });
});
