import { describe, it, expect } from 'vitest';
import { provisionGarage } from '../../../src/reconcilers/service/garage-admin.js';
import { fakeGarage } from './fake-garage.js';

const target = { baseUrl: 'http://10.0.0.9:3903', adminToken: 'tok', bucket: 'files', keyName: 'svc-files' };

describe('provisionGarage', () => {
  it('assigns the layout, creates bucket and key, allows the key, returns the real key', async () => {
    const g = fakeGarage('tok');
    const key = await provisionGarage(g.fetch, target);
    expect(key).toEqual({ accessKey: g.state.keys[0].id, secretKey: 'secret1' });
    expect(g.state.version).toBe(1);
    expect(g.state.roles).toEqual([{ id: g.node }]);
    expect(g.state.buckets).toHaveLength(1);
    expect(g.state.buckets[0].keys).toEqual([{ accessKeyId: key.accessKey, permissions: { read: true, write: true, owner: true } }]);
  });

  it('is idempotent: a second run creates nothing and returns the same key', async () => {
    const g = fakeGarage('tok');
    const first = await provisionGarage(g.fetch, target);
    g.state.calls.length = 0;
    const second = await provisionGarage(g.fetch, target);
    expect(second).toEqual(first);
    expect(g.state.keys).toHaveLength(1);
    expect(g.state.buckets).toHaveLength(1);
    expect(g.state.version).toBe(1);
    expect(g.state.calls.filter((c) => c.startsWith('POST'))).toEqual([]);
  });

  it.each(['POST /v1/layout/apply', 'POST /v1/bucket', 'POST /v1/key', 'POST /v1/bucket/allow'])(
    'finishes after a crash at %s without duplicates',
    async (step) => {
      const g = fakeGarage('tok');
      g.state.failNext = step;
      await expect(provisionGarage(g.fetch, target)).rejects.toThrow();
      const key = await provisionGarage(g.fetch, target);
      expect(g.state.keys).toHaveLength(1);
      expect(g.state.buckets).toHaveLength(1);
      expect(g.state.version).toBe(1);
      expect(g.state.buckets[0].keys.map((k) => k.accessKeyId)).toEqual([key.accessKey]);
    },
  );

  it('reports the admin API error with its status', async () => {
    const g = fakeGarage('other-token');
    await expect(provisionGarage(g.fetch, target)).rejects.toThrow(/garage admin GET \/v1\/status: HTTP 403/);
  });
});
