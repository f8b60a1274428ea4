// An in-memory Garage admin API v1 behind a fetch function, for provisioning tests: status and layout,
// buckets by global alias, keys (by id, 404 when unknown; created or imported), and bucket grants. `failNext` makes the next matching call fail, to
// simulate a crash half-way through.
import type { FetchFn } from '../../../src/reconcilers/service/garage-admin.js';

export function fakeGarage(token: string) {
  const node = 'a'.repeat(64);
  const state = {
    version: 0,
    roles: [] as { id: string }[],
    staged: [] as { id: string }[],
    buckets: [] as { id: string; alias: string; keys: { accessKeyId: string; permissions: Record<string, boolean> }[] }[],
    keys: [] as { id: string; name: string; secret: string }[],
    calls: [] as string[],
    failNext: undefined as string | undefined,
  };
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const bucketInfo = (b: (typeof state.buckets)[number]) => ({ id: b.id, globalAliases: [b.alias], keys: b.keys });
  const fetchFn: FetchFn = async (url, init) => {
    const u = new URL(url);
    const method = init?.method ?? 'GET';
    const call = `${method} ${u.pathname}`;
    state.calls.push(call);
    if ((init?.headers as Record<string, string>)?.authorization !== `Bearer ${token}`) return json({ message: 'forbidden' }, 403);
    if (state.failNext === call) {
      state.failNext = undefined;
      throw new Error('connect ECONNREFUSED');
    }
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    switch (call) {
      case 'GET /v1/status':
        return json({ node, garageVersion: 'v1.0.1', layoutVersion: state.version, nodes: [{ id: node, role: null, isUp: true }] });
      case 'GET /v1/layout':
        return json({ version: state.version, roles: state.roles, stagedRoleChanges: state.staged });
      case 'POST /v1/layout':
        state.staged.push(...body.map((r: { id: string }) => ({ id: r.id })));
        return json({ version: state.version, roles: state.roles, stagedRoleChanges: state.staged });
      case 'POST /v1/layout/apply':
        if (body.version !== state.version + 1) return json({ message: 'bad version' }, 400);
        state.version++;
        state.roles.push(...state.staged);
        state.staged = [];
        return json({ message: ['ok'], layout: {} });
      case 'GET /v1/bucket': {
        const b = state.buckets.find((x) => x.alias === u.searchParams.get('globalAlias'));
        return b ? json(bucketInfo(b)) : json({ message: 'no such bucket' }, 404);
      }
      case 'POST /v1/bucket': {
        if (state.buckets.some((x) => x.alias === body.globalAlias)) return json({ message: 'alias exists' }, 409);
        const b = { id: `b${state.buckets.length + 1}`.padEnd(64, '0'), alias: body.globalAlias, keys: [] };
        state.buckets.push(b);
        return json(bucketInfo(b));
      }
      case 'GET /v1/key': {
        const id = u.searchParams.get('id');
        if (!id) return json(state.keys.map((k) => ({ id: k.id, name: k.name })));
        const k = state.keys.find((x) => x.id === id);
        if (!k) return json({ code: 'NoSuchAccessKey', message: `Access key not found: ${id}` }, 404);
        return json({ name: k.name, accessKeyId: k.id, secretAccessKey: u.searchParams.get('showSecretKey') === 'true' ? k.secret : null });
      }
      case 'POST /v1/key/import': {
        if (!/^GK[0-9a-f]{24}$/.test(body.accessKeyId) || !/^[0-9a-f]{64}$/.test(body.secretAccessKey)) return json({ message: 'invalid key' }, 400);
        if (state.keys.some((x) => x.id === body.accessKeyId)) return json({ message: 'key exists' }, 409);
        const k = { id: body.accessKeyId, name: body.name, secret: body.secretAccessKey };
        state.keys.push(k);
        return json({ name: k.name, accessKeyId: k.id, secretAccessKey: null });
      }
      case 'POST /v1/key': {
        const k = { id: `GK${state.keys.length + 1}`.padEnd(26, '0'), name: body.name, secret: `secret${state.keys.length + 1}` };
        state.keys.push(k);
        return json({ name: k.name, accessKeyId: k.id, secretAccessKey: k.secret });
      }
      case 'POST /v1/bucket/allow': {
        const b = state.buckets.find((x) => x.id === body.bucketId)!;
        const grant = b.keys.find((k) => k.accessKeyId === body.accessKeyId);
        if (grant) Object.assign(grant.permissions, body.permissions);
        else b.keys.push({ accessKeyId: body.accessKeyId, permissions: { ...body.permissions } });
        return json(bucketInfo(b));
      }
    }
    return json({ message: 'not found' }, 404);
  };
  return { fetch: fetchFn, state, node };
}
