// The node agents, pure parts (docs/decisions/0041-node-agents.md): the Caddy config (only the engine's
// exec endpoints, only with the key, everything else 403), the secret named by the config's hash, the
// service spec (pinned to its node, the socket from the node's label, the secret mounted), the label's
// validation, and the plan that makes the agents match the nodes.
import { describe, expect, it } from 'vitest';
import {
  AGENT_PATHS,
  agentConfig,
  agentSecret,
  agentServiceName,
  agentServiceSpec,
  engineSocketOf,
  type PlanService,
} from '../../../src/runtime/swarm-agent-spec.js';
import { planAgents } from '../../../src/reconcilers/agents/plan.js';
import { deriveKey } from '../../../src/crypto.js';
import { agentFailure, agentReachesEdge } from '../../../src/runtime/swarm-agents.js';
import { EngineError } from '../../../src/runtime/docker-errors.js';

const KEY = 'ab'.repeat(32);
const EXEC = 'f'.repeat(64);

describe('agentConfig', () => {
  const config = agentConfig(KEY) as any;
  const server = config.apps.http.servers.agent;

  it('has no admin API and listens on the agent port of every interface of the task (the overlay)', () => {
    expect(config.admin).toEqual({ disabled: true, config: { persist: false } });
    expect(server.listen).toEqual([':2380']);
  });

  it("logs no key: Caddy's error log lists a failed request's headers, the filter deletes ours", () => {
    expect(config.logging).toEqual({ logs: { default: { encoder: { format: 'filter', wrap: { format: 'json' }, fields: { 'request>headers>Svc-Agent-Key': { filter: 'delete' } } } } } });
  });

  it('passes only keyed exec calls to the engine socket, without the key; anything else is 403', () => {
    const [pass] = server.routes;
    const deny = server.routes.at(-1);
    expect(pass.match).toEqual([
      { header: { 'Svc-Agent-Key': [KEY] }, method: ['POST'], path_regexp: { pattern: AGENT_PATHS.post } },
      { header: { 'Svc-Agent-Key': [KEY] }, method: ['GET'], path_regexp: { pattern: AGENT_PATHS.get } },
      { header: { 'Svc-Agent-Key': [KEY] }, method: ['GET', 'PUT'], path_regexp: { pattern: AGENT_PATHS.archive } },
    ]);
    expect(pass.handle).toEqual([{ handler: 'reverse_proxy', headers: { request: { delete: ['Svc-Agent-Key'] } }, upstreams: [{ dial: 'unix//var/run/docker.sock' }] }]);
    expect(deny).toMatchObject({ handle: [{ handler: 'static_response', status_code: 403 }] });
    expect(deny.match).toBeUndefined();
  });

  // Go's RE2 and JavaScript agree on these patterns (no lookaround, no backreference).
  it.each([
    ['POST', '/containers/0123abc/exec', true],
    ['POST', '/v1.41/containers/svc-web-3-r1/exec', true],
    ['POST', `/exec/${EXEC}/start`, true],
    ['POST', `/v1.43/exec/${EXEC}/resize`, true],
    ['GET', `/exec/${EXEC}/json`, true],
    ['GET', `/v1.41/exec/${EXEC}/json`, true],
    ['POST', '/containers/create', false],
    ['POST', '/containers/x/start', false],
    ['POST', '/containers/x/exec/extra', false],
    ['POST', '/containers/../images/exec', false],
    ['POST', `/exec/${EXEC}/json`, false],
    ['GET', '/containers/json', false],
    ['GET', '/v1.41/containers/0123abc/json', true],
    ['GET', '/containers/svc-web-3-r1/json', true],
    ['POST', '/containers/0123abc/json', false],
    ['GET', '/containers/0123abc/logs', false],
    // A directory as tar, read for backups and written for restores of data held on that node; never HEAD or export.
    ['GET', '/containers/0123abc/archive', true],
    ['GET', '/v1.41/containers/svc-test-pg/archive', true],
    ['PUT', '/containers/0123abc/archive', true],
    ['PUT', '/containers/0123abc/archive/x', false],
    ['POST', '/containers/0123abc/archive', false],
    ['HEAD', '/containers/0123abc/archive', false],
    ['GET', '/containers/0123abc/export', false],
    ['GET', '/containers/0123abc/archive/x', false],
    ['GET', '/containers/x/exec', false],
    ['POST', '/images/create', false],
    ['POST', '/v1.41/services/create', false],
    ['GET', `/exec/${EXEC.slice(1)}/json`, false],
    ['POST', '/x/containers/y/exec', false],
  ])('%s %s -> passed: %s', (method, path, passed) => {
    // What the config's matcher sets (method and path) let through.
    const sets = server.routes[0].match as { method: string[]; path_regexp: { pattern: string } }[];
    expect(sets.some((m) => m.method.includes(method) && new RegExp(m.path_regexp.pattern).test(path))).toBe(passed);
  });

  it('is deterministic; its secret is named by the hash of its bytes, so another key is another secret', () => {
    expect(JSON.stringify(agentConfig(KEY))).toBe(JSON.stringify(agentConfig(KEY)));
    const a = agentSecret('prod', KEY);
    expect(a.name).toMatch(/^prod-agent-[0-9a-f]{16}$/);
    expect(JSON.parse(a.data)).toEqual(agentConfig(KEY));
    expect(agentSecret('prod', 'cd'.repeat(32)).name).not.toBe(a.name);
    expect(agentSecret('prod', KEY).name).toBe(a.name);
  });
});

describe("the agent's routes to an edge node's admin APIs (docs/decisions/0043-edge-nodes.md)", () => {
  const routes = (agentConfig(KEY) as any).apps.http.servers.agent.routes;
  const edge = routes.slice(1, -1);

  it('two prefixes (the Caddy, the relay), only with the key, GET and POST, before the 403; the prefix and the key are taken off, the Host set', () => {
    expect(routes).toHaveLength(4);
    expect(edge.map((r: any) => r.match)).toEqual([
      [{ header: { 'Svc-Agent-Key': [KEY] }, method: ['GET', 'POST'], path: ['/svc-edge/proxy/*'] }],
      [{ header: { 'Svc-Agent-Key': [KEY] }, method: ['GET', 'POST'], path: ['/svc-edge/relay/*'] }],
    ]);
    const [proxy, relay] = edge;
    expect(proxy.handle[0]).toEqual({ handler: 'rewrite', strip_path_prefix: '/svc-edge/proxy' });
    expect(proxy.handle[1]).toMatchObject({
      handler: 'reverse_proxy',
      headers: { request: { delete: ['Svc-Agent-Key'], set: { Host: ['svc-edge'] } } },
      upstreams: [{ dial: 'unix//svc-edge/proxy-admin.sock' }],
    });
    expect(relay.handle[1].upstreams).toEqual([{ dial: 'unix//svc-edge/relay-admin-a.sock' }]);
    expect(relay.handle[1].transport.dial_timeout).toBe('2s');
  });
});

describe('the agents key', () => {
  it('is 32 bytes derived from the sealing key: stable, and another key gives another', () => {
    const sealing = Buffer.alloc(32, 7);
    const k = deriveKey(sealing, 'swarm node agents');
    expect(k).toHaveLength(32);
    expect(deriveKey(sealing, 'swarm node agents').equals(k)).toBe(true);
    expect(deriveKey(Buffer.alloc(32, 8), 'swarm node agents').equals(k)).toBe(false);
    expect(deriveKey(sealing, 'something else').equals(k)).toBe(false);
    expect(k.equals(sealing)).toBe(false);
  });
});

describe('engineSocketOf', () => {
  it.each([
    [undefined, '/var/run/docker.sock'],
    [{}, '/var/run/docker.sock'],
    [{ 'svc.engine-socket': '' }, '/var/run/docker.sock'],
    [{ 'svc.engine-socket': '/run/user/1000/docker.sock' }, '/run/user/1000/docker.sock'],
    [{ 'svc.engine-socket': '/tmp/svsw1a2b/n2/docker.sock' }, '/tmp/svsw1a2b/n2/docker.sock'],
  ])('%j -> %s', (labels, socket) => {
    expect(engineSocketOf(labels as Record<string, string> | undefined)).toBe(socket);
  });

  it.each(['docker.sock', 'run/docker.sock', '/var/../etc/shadow', '/var/run/./docker.sock', '/var//run/docker.sock', '/var/run/', '/var/run/docker sock', '/var/run/$(id)', '/var/run/docker.sock,readonly', '/' + 'a'.repeat(600), '/var/run/docker.sock\n'])(
    'refuses %j',
    (v) => {
      expect(() => engineSocketOf({ 'svc.engine-socket': v })).toThrow(/svc\.engine-socket/);
    },
  );
});

describe('agentServiceSpec', () => {
  const input = { instance: 'prod', network: 'svc-net', image: 'caddy:2', nodeId: 'node0123456789abcdef', socket: '/run/user/1000/docker.sock', secret: { id: 'sec1', name: 'prod-agent-0011223344556677' } };
  const spec = agentServiceSpec(input);

  it('is one task pinned to its node, restarted by Swarm, on the overlay, running Caddy on the secret', () => {
    expect(spec.Name).toBe('prod-agent-node01234567');
    expect(agentServiceName('prod', 'node0123456789abcdef')).toBe(spec.Name);
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
    expect(spec.TaskTemplate.Placement).toEqual({ Constraints: ['node.id==node0123456789abcdef'] });
    expect(spec.TaskTemplate.RestartPolicy.Condition).toBe('any');
    expect(spec.TaskTemplate.Networks).toEqual([{ Target: 'svc-net' }]);
    const c = spec.TaskTemplate.ContainerSpec;
    expect(c.Image).toBe('caddy:2');
    expect([...c.Command, ...c.Args]).toEqual(['/usr/bin/caddy', 'run', '--config', '/run/secrets/agent.json']);
    expect(c.Mounts).toEqual([{ Type: 'bind', Source: '/run/user/1000/docker.sock', Target: '/var/run/docker.sock' }]);
    expect(c.Secrets).toEqual([{ SecretID: 'sec1', SecretName: 'prod-agent-0011223344556677', File: { Name: 'agent.json', UID: '0', GID: '0', Mode: 0o400 } }]);
    expect(spec.Labels).toMatchObject({ 'svc.managed': 'true', 'svc.instance': 'prod', 'svc.role': 'agent', 'svc.node': 'node0123456789abcdef' });
  });

  it('an edge node\'s agent mounts the edge volume and the resolver\'s; any other keeps the spec (and hash) it had', () => {
    const edge = agentServiceSpec({ ...input, edge: true });
    expect(edge.TaskTemplate.ContainerSpec.Mounts).toEqual([
      { Type: 'bind', Source: '/run/user/1000/docker.sock', Target: '/var/run/docker.sock' },
      { Type: 'volume', Source: 'prod-edge', Target: '/svc-edge' },
      { Type: 'volume', Source: 'prod-edge-dns', Target: '/svc-edge-dns' },
    ]);
    expect(edge.Labels['svc.agent-spec']).not.toBe(spec.Labels['svc.agent-spec']);
    expect(agentServiceSpec({ ...input, edge: false }).Labels['svc.agent-spec']).toBe(spec.Labels['svc.agent-spec']);
    expect(agentReachesEdge({ 'svc.edge': 'true' })).toBe(true);
    expect(agentReachesEdge({ 'svc.edge': 'false' })).toBe(false);
    expect(agentReachesEdge({})).toBe(false);
    // Not understood: the edge services are kept, so is the way to them.
    expect(agentReachesEdge({ 'svc.edge': 'yes' })).toBe(true);
  });

  it('its hash label follows what matters: socket, image, secret; not the secret id', () => {
    const hash = (o: Partial<typeof input>) => agentServiceSpec({ ...input, ...o }).Labels['svc.agent-spec'];
    expect(hash({})).toMatch(/^[0-9a-f]{16}$/);
    expect(hash({ secret: { ...input.secret, id: 'other' } })).toBe(hash({}));
    expect(hash({ socket: '/var/run/docker.sock' })).not.toBe(hash({}));
    expect(hash({ image: 'caddy:2.7' })).not.toBe(hash({}));
    expect(hash({ secret: { id: 'sec1', name: 'prod-agent-ffffffffffffffff' } })).not.toBe(hash({}));
  });
});

describe('planAgents', () => {
  const svc = (node: string, hash = 'h', name = `prod-agent-${node}`): PlanService => ({ id: `id-${name}`, name, labels: { 'svc.node': node, 'svc.agent-spec': hash } });
  const base = { selfId: 'm', wantedSecret: 'prod-agent-new', wantedHash: () => 'h' };
  const names = (p: ReturnType<typeof planAgents>) => ({
    create: p.create.map((c) => `${c.node.id}:${c.socket}`),
    update: p.update.map((u) => u.service.name),
    remove: p.remove.map((r) => r.name),
    removeSecrets: p.removeSecrets,
    skipped: p.skipped.map((s) => s.node.id),
  });

  it.each([
    {
      what: 'a fresh cluster: one per node but the manager svc runs on, the socket from the label',
      nodes: [{ id: 'm' }, { id: 'w1' }, { id: 'w2', labels: { 'svc.engine-socket': '/run/docker.sock' } }],
      services: [],
      secrets: [],
      want: { create: ['w1:/var/run/docker.sock', 'w2:/run/docker.sock'], update: [], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'all in place: nothing to do',
      nodes: [{ id: 'm' }, { id: 'w1' }],
      services: [svc('w1')],
      secrets: ['prod-agent-new'],
      want: { create: [], update: [], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'a node left: its agent goes; a changed spec is updated; the old secret goes',
      nodes: [{ id: 'm' }, { id: 'w1' }],
      services: [svc('w1', 'old'), svc('gone')],
      secrets: ['prod-agent-old', 'prod-agent-new'],
      want: { create: [], update: ['prod-agent-w1'], remove: ['prod-agent-gone'], removeSecrets: ['prod-agent-old'], skipped: [] },
    },
    {
      what: 'an agent on the manager (it became the one svc runs on) goes; a second agent for a node goes',
      nodes: [{ id: 'm' }, { id: 'w1' }],
      services: [svc('m'), svc('w1'), svc('w1', 'h', 'prod-agent-w1-dup')],
      secrets: ['prod-agent-new'],
      want: { create: [], update: [], remove: ['prod-agent-w1-dup', 'prod-agent-m'], removeSecrets: [], skipped: [] },
    },
    {
      what: 'an agent scaled by hand (to 0, or 2) is set back to one task',
      nodes: [{ id: 'm' }, { id: 'w1' }, { id: 'w2' }],
      services: [{ ...svc('w1'), replicas: 0 }, { ...svc('w2'), replicas: 2 }],
      secrets: ['prod-agent-new'],
      want: { create: [], update: ['prod-agent-w1', 'prod-agent-w2'], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'a node whose socket label is not a plain path gets no agent (and loses one it had)',
      nodes: [{ id: 'm' }, { id: 'w1', labels: { 'svc.engine-socket': '/var/../etc/x' } }],
      services: [svc('w1')],
      secrets: [],
      want: { create: [], update: [], remove: ['prod-agent-w1'], removeSecrets: [], skipped: ['w1'] },
    },
  ] as { what: string; nodes: { id: string; labels?: Record<string, string> }[]; services: PlanService[]; secrets: string[]; want: Record<'create' | 'update' | 'remove' | 'removeSecrets' | 'skipped', string[]> }[])('$what', ({ nodes, services, secrets, want }) => {
    const plan = planAgents({ ...base, nodes, services, secrets });
    expect(names(plan)).toEqual(want);
    // Applied, the same look plans nothing.
    const after = [...services.filter((s) => !want.remove.includes(s.name)).map((s) => ({ ...s, replicas: 1, labels: { ...s.labels, 'svc.agent-spec': 'h' } })), ...plan.create.map((c) => svc(c.node.id))];
    const again = planAgents({ ...base, nodes, services: after, secrets: secrets.filter((s) => !want.removeSecrets.includes(s)) });
    expect(names(again)).toEqual({ create: [], update: [], remove: [], removeSecrets: [], skipped: want.skipped });
  });
});

describe('agentFailure', () => {
  it.each([
    [Object.assign(new Error('connect ENOENT /d/edge/agent.sock'), {}), /edge relay, svc's way onto the overlay, is not running yet, so the agent of node w1 cannot be reached/],
    [Object.assign(new Error('connect ECONNREFUSED /d/edge/agent.sock'), {}), /edge relay.*not running yet/],
    [new EngineError('docker exec x sh: bad gateway', 502), /the agent of node w1 did not answer through the edge relay/],
    [new EngineError('docker exec x sh: forbidden', 403), /the agent of node w1 refused the call/],
    [new EngineError('docker exec x sh: No such container: x', 404), /^docker exec x sh: No such container: x$/],
  ])('%s', (err, said) => {
    expect(agentFailure('w1', err).message).toMatch(said);
  });
});
