// Edge nodes, pure parts (docs/decisions/0043-edge-nodes.md, 0047-swarm-edge-resolves.md): the label's meaning
// and validation, the three services of an edge node (pinned, the Caddy on the host network, the relay and its
// resolver on the overlay, the volumes and the bootstrap secret mounted), and the plan that makes the services
// match the labels.
import { describe, expect, it } from 'vitest';
import { EDGE_NODE_SOCKETS, edgeAdminSocket, edgeBootConfig, edgeBootSecret, edgeResolverSpec, edgeServiceName, edgeServiceSpec, isEdgeNode, type EdgeService, type EdgePlanService } from '../../../src/runtime/swarm-edge-spec.js';
import { resolverArgs } from '../../../src/runtime/resolver-spec.js';
import { planEdges } from '../../../src/reconcilers/edges/plan.js';

describe('isEdgeNode', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ 'svc.edge': 'false' }, false],
    [{ 'svc.edge': 'true' }, true],
    [{ 'svc.services': 'true' }, false],
  ])('%j -> %s', (labels, edge) => {
    expect(isEdgeNode(labels as Record<string, string> | undefined)).toBe(edge);
  });

  it.each(['', 'True', 'yes', '1', 'true ', 'on'])('refuses %j (a typo never half-configures a node)', (v) => {
    expect(() => isEdgeNode({ 'svc.edge': v })).toThrow(/svc\.edge/);
  });
});

describe('edgeServiceSpec', () => {
  const input = { instance: 'prod', network: 'svc-net', image: 'caddy:2', nodeId: 'node0123456789abcdef', secret: { id: 'sec1', name: 'prod-edge-proxy-001122334455' } };
  const proxy = edgeServiceSpec({ ...input, part: 'proxy' });
  const relay = edgeServiceSpec({ ...input, part: 'relay', secret: { id: 'sec2', name: 'prod-edge-relay-001122334455' } });

  it('one task each, pinned to the node, restarted by Swarm, Caddy resuming its last config', () => {
    expect(proxy.Name).toBe('prod-edge-proxy-node01234567');
    expect(relay.Name).toBe(edgeServiceName('prod', 'relay', 'node0123456789abcdef'));
    expect(relay.Name).toBe('prod-edge-relay-node01234567');
    for (const s of [proxy, relay]) {
      expect(s.Mode).toEqual({ Replicated: { Replicas: 1 } });
      expect(s.TaskTemplate.Placement).toEqual({ Constraints: ['node.id==node0123456789abcdef'] });
      expect(s.TaskTemplate.RestartPolicy.Condition).toBe('any');
      const c = s.TaskTemplate.ContainerSpec;
      expect([...c.Command, ...c.Args]).toEqual(['/usr/bin/caddy', 'run', '--resume', '--config', '/run/secrets/edge-boot.json']);
      expect(c.Mounts).toEqual([{ Type: 'volume', Source: 'prod-edge', Target: '/svc-edge' }]);
      expect(c.Secrets[0]).toMatchObject({ File: { Name: 'edge-boot.json', UID: '0', GID: '0', Mode: 0o400 } });
    }
    expect(proxy.TaskTemplate.ContainerSpec.Env).toEqual(['HOME=/svc-edge/proxy', 'XDG_DATA_HOME=/svc-edge/proxy/data', 'XDG_CONFIG_HOME=/svc-edge/proxy/config']);
    // The relay keeps relay A's dirs of the pair before: an upgrade keeps its task and its autosave.
    expect(relay.TaskTemplate.ContainerSpec.Env).toEqual(['HOME=/svc-edge/relay-a', 'XDG_DATA_HOME=/svc-edge/relay-a/data', 'XDG_CONFIG_HOME=/svc-edge/relay-a/config']);
  });

  it("the resolver: dnsmasq of the resolver image on the overlay, pinned, the hosts files' volume read-only, root dropping to nobody, no secret", () => {
    const dns = edgeResolverSpec({ instance: 'prod', network: 'svc-net', nodeId: 'node0123456789abcdef', image: 'svc/dnsmasq:1' });
    expect(dns.Name).toBe('prod-edge-dns-node01234567');
    expect(dns.Labels['svc.role']).toBe('edge-dns');
    const c = dns.TaskTemplate.ContainerSpec;
    expect(c).toMatchObject({ Image: 'svc/dnsmasq:1', Args: resolverArgs('/svc-edge-dns'), User: '0:0' });
    expect(c.Mounts).toEqual([{ Type: 'volume', Source: 'prod-edge-dns', Target: '/svc-edge-dns', ReadOnly: true }]);
    expect(dns.TaskTemplate.Networks).toEqual([{ Target: 'svc-net' }]);
    expect(dns.TaskTemplate.Placement).toEqual({ Constraints: ['node.id==node0123456789abcdef'] });
    expect(edgeResolverSpec({ instance: 'prod', network: 'svc-net', nodeId: 'node0123456789abcdef', image: 'svc/dnsmasq:2' }).Labels['svc.edge-spec']).not.toBe(dns.Labels['svc.edge-spec']);
  });

  it("the Caddy on the node's host network (its listeners are the node's ports), the relay on the overlay", () => {
    expect(proxy.TaskTemplate.Networks).toEqual([{ Target: 'host' }]);
    expect(relay.TaskTemplate.Networks).toEqual([{ Target: 'svc-net' }]);
    expect(proxy.Labels).toMatchObject({ 'svc.managed': 'true', 'svc.instance': 'prod', 'svc.role': 'edge-proxy', 'svc.node': 'node0123456789abcdef' });
    expect(relay.Labels['svc.role']).toBe('edge-relay');
  });

  it('its hash follows the image, network and secret name, not the secret id', () => {
    const hash = (o: object) => edgeServiceSpec({ ...input, part: 'proxy', ...o }).Labels['svc.edge-spec'];
    expect(hash({})).toMatch(/^[0-9a-f]{16}$/);
    expect(hash({ secret: { ...input.secret, id: 'other' } })).toBe(hash({}));
    expect(hash({ image: 'caddy:2.7' })).not.toBe(hash({}));
    expect(hash({ secret: { id: 'sec1', name: 'prod-edge-proxy-ffffffffffff' } })).not.toBe(hash({}));
    expect(edgeServiceSpec({ ...input, part: 'relay', network: 'other' }).Labels['svc.edge-spec']).not.toBe(relay.Labels['svc.edge-spec']);
  });

  it('each part boots with its admin API on its own socket in the volume, Host svc-edge; the secret is named by its bytes', () => {
    expect(edgeBootConfig('proxy')).toEqual({ admin: { listen: 'unix//svc-edge/proxy-admin.sock', origins: ['svc-edge'] } });
    expect(edgeBootConfig('relay')).toEqual({ admin: { listen: 'unix//svc-edge/relay-admin-a.sock', origins: ['svc-edge'] } });
    expect(edgeAdminSocket('relay')).toBe(EDGE_NODE_SOCKETS.relayAdmin);
    // What the node's Caddy dials: the relay's listener (relay A's of the pair before).
    expect(EDGE_NODE_SOCKETS.relay).toBe('/svc-edge/relay-a.sock');
    const s = edgeBootSecret('prod', 'proxy');
    expect(s.name).toMatch(/^prod-edge-proxy-[0-9a-f]{12}$/);
    expect(JSON.parse(s.data)).toEqual(edgeBootConfig('proxy'));
    expect(edgeBootSecret('prod', 'relay').name).not.toBe(s.name);
  });
});

describe('planEdges', () => {
  const svc = (node: string, part: EdgeService, hash = 'h', replicas = 1): EdgePlanService => ({
    id: `id-${node}-${part}`,
    name: `prod-edge-${part}-${node}`,
    labels: { 'svc.role': `edge-${part}`, 'svc.node': node, 'svc.edge-spec': hash },
    replicas,
  });
  const base = { selfId: 'm', wantedSecrets: ['boot-p', 'boot-r'], wantedHash: () => 'h' };
  const names = (p: ReturnType<typeof planEdges>) => ({
    create: p.create.map((c) => `${c.node.id}/${c.part}`),
    update: p.update.map((u) => u.service.name),
    remove: p.remove.map((r) => r.name),
    removeSecrets: p.removeSecrets,
    skipped: p.skipped.map((s) => s.node.id),
  });
  const edge = { 'svc.edge': 'true' };

  it.each([
    {
      what: 'no label anywhere: nothing (the manager is the edge)',
      nodes: [{ id: 'm' }, { id: 'w1' }],
      services: [],
      want: { create: [], update: [], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'a worker labelled: the three parts there; the manager svc runs on never gets any, labelled or not',
      nodes: [{ id: 'm', labels: edge }, { id: 'w1', labels: edge }, { id: 'w2' }],
      services: [],
      want: { create: ['w1/proxy', 'w1/relay', 'w1/dns'], update: [], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'all in place: nothing to do',
      nodes: [{ id: 'm' }, { id: 'w1', labels: edge }],
      services: [svc('w1', 'proxy'), svc('w1', 'relay'), svc('w1', 'dns')],
      want: { create: [], update: [], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'the label removed, or set to false: every part goes',
      nodes: [{ id: 'm' }, { id: 'w1', labels: { 'svc.edge': 'false' } }, { id: 'w2' }],
      services: [svc('w1', 'proxy'), svc('w1', 'relay'), svc('w1', 'dns'), svc('w2', 'proxy')],
      want: { create: [], update: [], remove: ['prod-edge-proxy-w1', 'prod-edge-relay-w1', 'prod-edge-dns-w1', 'prod-edge-proxy-w2'], removeSecrets: [], skipped: [] },
    },
    {
      what: 'the node left the Swarm: its services go',
      nodes: [{ id: 'm' }],
      services: [svc('gone', 'proxy'), svc('gone', 'relay')],
      want: { create: [], update: [], remove: ['prod-edge-proxy-gone', 'prod-edge-relay-gone'], removeSecrets: [], skipped: [] },
    },
    {
      what: 'another spec hash (a new image) or scaled by hand: updated; one part missing: made',
      nodes: [{ id: 'm' }, { id: 'w1', labels: edge }, { id: 'w2', labels: edge }],
      services: [svc('w1', 'proxy', 'old'), svc('w1', 'relay', 'h', 0), svc('w1', 'dns'), svc('w2', 'relay'), svc('w2', 'dns')],
      want: { create: ['w2/proxy'], update: ['prod-edge-proxy-w1', 'prod-edge-relay-w1'], remove: [], removeSecrets: [], skipped: [] },
    },
    {
      what: 'upgrade: a node with the pair of before keeps its Caddy and relay A, gets its resolver; relay B and the swapper go',
      nodes: [{ id: 'm' }, { id: 'w1', labels: edge }],
      services: [svc('w1', 'proxy'), svc('w1', 'relay'), { ...svc('w1', 'relay'), id: 'b', name: 'prod-edge-relay-b-w1', labels: { ...svc('w1', 'relay').labels, 'svc.role': 'edge-relay-b' } }, { ...svc('w1', 'relay'), id: 's', name: 'prod-edge-swap-w1', labels: { ...svc('w1', 'relay').labels, 'svc.role': 'edge-swap' } }],
      want: { create: ['w1/dns'], update: [], remove: ['prod-edge-relay-b-w1', 'prod-edge-swap-w1'], removeSecrets: [], skipped: [] },
    },
    {
      what: 'a label not understood: the node is skipped and what runs there stays',
      nodes: [{ id: 'm' }, { id: 'w1', labels: { 'svc.edge': 'yes' } }, { id: 'w2', labels: { 'svc.edge': 'True' } }],
      services: [svc('w1', 'proxy'), svc('w1', 'relay')],
      want: { create: [], update: [], remove: [], removeSecrets: [], skipped: ['w1', 'w2'] },
    },
    {
      what: 'a second service for the same node and part, or one without a node: removed',
      nodes: [{ id: 'm' }, { id: 'w1', labels: edge }],
      services: [svc('w1', 'proxy'), { ...svc('w1', 'proxy'), id: 'dup', name: 'dup' }, svc('w1', 'relay'), svc('w1', 'dns'), { id: 'x', name: 'x', labels: { 'svc.role': 'edge-proxy' } }],
      want: { create: [], update: [], remove: ['dup', 'x'], removeSecrets: [], skipped: [] },
    },
  ])('$what', ({ nodes, services, want }) => {
    expect(names(planEdges({ ...base, nodes, services, secrets: ['boot-p', 'boot-r'] }))).toEqual(want);
  });

  it('boot secrets other than the wanted ones go (once no service names them)', () => {
    expect(planEdges({ ...base, nodes: [], services: [], secrets: ['boot-old', 'boot-p', 'boot-r'] }).removeSecrets).toEqual(['boot-old']);
  });

  it('is idempotent: the services it asks for, once made, plan nothing', () => {
    const nodes = [{ id: 'm' }, { id: 'w1', labels: edge }, { id: 'w2', labels: edge }];
    const first = planEdges({ ...base, nodes, services: [], secrets: [] });
    const made = first.create.map((c) => svc(c.node.id, c.part));
    expect(names(planEdges({ ...base, nodes, services: made, secrets: ['boot-p', 'boot-r'] }))).toEqual({ create: [], update: [], remove: [], removeSecrets: [], skipped: [] });
  });
});
