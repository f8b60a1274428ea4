// Edge nodes on a real three-node Swarm (test/support/swarm-cluster.ts; docs/decisions/0043-edge-nodes.md): a
// worker labelled `svc.edge=true` through PUT /api/nodes/{id} gets an edge Caddy on its host network and a
// relay on the overlay; a 3-replica port-mode app answers GET and POST on that worker's address (its network
// namespace) as on the manager's listener, and a domain-mode app over HTTPS with the node's own certificate;
// the node runs one relay and its resolver, whose hosts files svc writes through the node's agent; a deploy
// under keep-alive GET/POST clients through the edge node fails no request and loads no config there (each
// switch is a new DNS answer: docs/decisions/0047-swarm-edge-resolves.md); a switch while the node's relay is
// down reaches it when it comes back; the label removed, the node's edge services are gone and its listener closes; labelled again with the
// docker CLI it serves again, and svc uninstall removes its services and their secrets. The daemon has no
// SVC_RESOLVER_IMAGE: the resolvers run the image svc built from this host's dnsmasq and pushed to the cluster's
// registry (docs/decisions/0058-own-resolver-image.md). One cluster, one daemon; everything goes with them even
// when a test fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { createAppCluster } from '../support/swarm-app-cluster.js';
import { destroyCluster, type Cluster, type ClusterNode, swarmDaemonEnv } from '../support/swarm-cluster.js';
import { deployReaching, requestImageDeploy, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { freePort } from '../support/caddy.js';
import { waitFor } from '../support/wait.js';
import { formatCounts, startLoad } from '../../bench/common.js';
import { uninstallInstance } from '../../src/cli/uninstall.js';
import { filesOfTar } from '../../src/dns/hosts.js';

let cluster: Cluster;
let t: TestDaemon | undefined;
let v1: string;
let v2: string;
let appId: number;
let port: number;
let edge: ClusterNode;
let edgeId: string;

const d = (args: string[]) => cluster.docker(cluster.manager, args).trim();
const lines = (s: string) => s.split('\n').filter(Boolean);
/** The instance's edge services: `name replicas`. */
const edgeServices = () =>
  ['edge-proxy', 'edge-relay', 'edge-dns'].flatMap((role) => lines(d(['service', 'ls', '--filter', `label=svc.instance=${t!.instance}`, '--filter', `label=svc.role=${role}`, '--format', '{{.Name}} {{.Replicas}}'])));
const get = async (host: string, path = '/') => {
  const res = await fetch(`http://${host}:${port}${path}`, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, text: await res.text() };
};
const labels = (extra: Record<string, string>) => ({ 'svc.engine-socket': edge.socket, ...extra });
const taskOf = (service: string) => cluster.docker(edge, ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${service}`]).trim();
/** The resolver's hosts files on the edge node, read in the agent's container with the engine's archive (`docker cp ... -`: a tar). */
const filesOnNode = () => filesOfTar(Buffer.from(cluster.docker(edge, ['cp', `${taskOf(`${t!.instance}-agent-${edgeId.slice(0, 12)}`)}:/svc-edge-dns`, '-']), 'latin1'));
/** Config loads the edge node's relay got (its admin log). */
const relayLoads = () => {
  const r = cluster.docker(edge, ['logs', taskOf(`${t!.instance}-edge-relay-${edgeId.slice(0, 12)}`)]);
  return r.split('\n').filter((l) => l.includes('"uri":"/load"')).length;
};

beforeAll(async () => {
  // The proxy image from the cluster's registry: the relay on the manager, the agents and the edge services on the workers.
  let caddy: string;
  ({ cluster, v1, v2, caddy } = await createAppCluster());
  edge = cluster.nodes[2]!;
  edgeId = d(['node', 'inspect', '--format', '{{.ID}}', edge.hostname]);
  t = await startTestDaemon('swedgen', swarmDaemonEnv(cluster, { probe: v1, proxy: caddy, ownResolver: true }));
  port = await freePort();
  const res = await t.api('POST', '/api/apps', { name: 'en-web', internal_port: 3000, access_mode: 'port', fallback_port: port, replicas: 3, health_check_path: '/health' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  appId = res.body.id;
  await deployReaching(t, await requestImageDeploy(t, appId, v1), (x) => x.status === 'success', 'to succeed', 90_000);
}, 240_000);

afterAll(async () => {
  await t?.close().catch(() => {});
  destroyCluster(cluster);
});

describe('edge nodes (svc.edge=true)', () => {
  it('a labelled worker serves the port-mode app on its own address, GET and POST, as the manager does', async () => {
    expect(edgeServices()).toEqual([]);
    const t0 = Date.now();
    const put = await t!.api('PUT', `/api/nodes/${edgeId}`, { labels: labels({ 'svc.edge': 'true' }) });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await waitFor(() => edgeServices().length === 3 && edgeServices().every((s) => s.endsWith(' 1/1')), { timeoutMs: 60_000, what: `the edge services running (${edgeServices().join(', ')})` });
    const node = edgeId.slice(0, 12);
    expect(edgeServices().map((s) => s.split(' ')[0]).sort()).toEqual([`${t!.instance}-edge-dns-${node}`, `${t!.instance}-edge-proxy-${node}`, `${t!.instance}-edge-relay-${node}`].sort());
    await waitFor(async () => (await get(edge.address).catch(() => undefined))?.status === 200, { timeoutMs: 30_000, what: "the app on the edge node's address" });
    console.log(`edge node serving ${Date.now() - t0} ms after the label`);
    const onEdge = await Promise.all(Array.from({ length: 30 }, () => get(edge.address)));
    expect(onEdge.map((a) => a.status)).toEqual(Array(30).fill(200));
    expect(onEdge[0]!.text).toContain('svc-test web v1');
    const onManager = await get('127.0.0.1');
    expect(onManager.status).toBe(200);
    expect(onManager.text).toBe(onEdge[0]!.text);
    const post = await fetch(`http://${edge.address}:${port}/cgi-bin/echo`, { method: 'POST', body: 'x=1' });
    expect(post.status).toBe(200);
    expect(await post.text()).toContain('posted to v1');
    // Not on the other worker: it has no label.
    await expect(get(cluster.nodes[1]!.address)).rejects.toThrow();
    // One relay and its resolver run on the edge node; the resolver's files hold the app's three replicas.
    const onNode = lines(cluster.docker(edge, ['ps', '--filter', `label=svc.instance=${t!.instance}`, '--format', '{{.Label "com.docker.swarm.service.name"}}'])).filter((n) => /-(edge|agent)-/.test(n)).sort();
    expect(onNode).toEqual([`${t!.instance}-agent-${node}`, `${t!.instance}-edge-dns-${node}`, `${t!.instance}-edge-proxy-${node}`, `${t!.instance}-edge-relay-${node}`].sort());
    expect(lines(filesOnNode().get('en-web.svc.internal') ?? '')).toHaveLength(3);
    // The resolvers run svc's own image: on the manager as built, on the edge node pulled from the registry.
    const resolverImage = d(['service', 'inspect', '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}', `${t!.instance}-edge-dns-${node}`]);
    expect(resolverImage).toMatch(new RegExp(`^${cluster.registry.replace(/\./g, '\\.')}/svc-build/svc\\.dnsmasq:[0-9a-f]{12}`));
    expect(d(['inspect', '--format', '{{.Config.Image}}', `${t!.instance}-edge-dns`])).toBe(resolverImage.split('@')[0]);
  }, 120_000);

  it("domain mode on the edge node: HTTPS with the node's own certificate (internal issuer), as on the manager", async () => {
    const res = await t!.api('POST', '/api/apps', { name: 'en-site', internal_port: 3000, access_mode: 'domain', domain: 'en-site.svc.test', health_check_path: '/health' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await deployReaching(t!, await requestImageDeploy(t!, res.body.id, v1), (x) => x.status === 'success', 'to succeed', 90_000);
    const https = (host: string) =>
      new Promise<{ status: number; body: string; cert: string } | undefined>((resolve) => {
        const req = httpsRequest(
          { host, port: t!.httpsPort, path: '/', servername: 'en-site.svc.test', headers: { host: 'en-site.svc.test' }, rejectUnauthorized: false, timeout: 5_000 },
          (r) => {
            // Read while the socket is still the answer's (it is detached once the body ends).
            const cert = (r.socket as TLSSocket).getPeerCertificate().fingerprint256;
            let body = '';
            r.on('data', (c: Buffer) => (body += c));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body, cert }));
          },
        );
        req.on('error', () => resolve(undefined));
        req.end();
      });
    const onEdge = await waitFor(async () => {
      const r = await https(edge.address);
      return r?.status === 200 ? r : undefined;
    }, { timeoutMs: 30_000, what: 'HTTPS on the edge node' });
    expect(onEdge.body).toContain('v1');
    const onManager = await waitFor(async () => {
      const r = await https('127.0.0.1');
      return r?.status === 200 ? r : undefined;
    }, { timeoutMs: 30_000, what: 'HTTPS on the manager' });
    expect(onManager.body).toBe(onEdge.body);
    // Each edge's Caddy holds a certificate of its own (docs/api.md "Edge nodes": where a domain's DNS points).
    expect(onEdge.cert).not.toBe(onManager.cert);
  }, 120_000);

  it("a deploy under keep-alive GET and POST clients through the edge node: no failed request, no config loaded there, the node's answers the manager's", async () => {
    const before = relayLoads();
    const files = filesOnNode().get('en-web.svc.internal');
    const load = startLoad(port, { clients: 6, maxMs: 120_000, host: edge.address });
    try {
      await deployReaching(t!, await requestImageDeploy(t!, appId, v2), (x) => x.status === 'success', 'to succeed', 90_000);
      await waitFor(async () => (await get(edge.address)).text.includes('v2'), { timeoutMs: 10_000, what: 'v2 on the edge node' });
    } finally {
      await load.stop();
    }
    const s = load.stats;
    console.log(`deploy under load through the edge node: ${s.total} requests, ${s.ok} ok, non-2xx ${formatCounts(s.non2xx)}, errors ${formatCounts(s.connErrors)}; relay loads ${before} -> ${relayLoads()}`);
    if (s.failures.length) console.log(`failures at ${s.failures.map((f) => `${new Date(f.at).toISOString()} ${f.what}`).join(', ')}`);
    expect(s.total).toBeGreaterThan(50);
    expect(s.connErrors.size).toBe(0);
    expect(formatCounts(s.non2xx)).toBe('none');
    expect(s.ok).toBe(s.total);
    // Every switch is a hosts file written through the agent: the relay's config is never loaded.
    expect(relayLoads()).toBe(before);
    const after = filesOnNode().get('en-web.svc.internal');
    expect(after).not.toBe(files);
    expect(lines(after ?? '')).toHaveLength(3);
  }, 150_000);

  it("a switch while the node's relay and resolver are down: they come back with the current answers", async () => {
    // Stopped (as a crash that Swarm has not restarted yet); meanwhile a deploy switches and removes the
    // replicas they last knew. The answers were written all the same (through the agent), so the relay that
    // resumes its last config resolves the current replicas.
    const relays = ['relay', 'dns'].map((p) => `${t!.instance}-edge-${p}-${edgeId.slice(0, 12)}`);
    const relayTasks = () => relays.map((r) => cluster.docker(edge, ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${r}`]).trim()).join('');
    d(['service', 'scale', '--detach', ...relays.map((r) => `${r}=0`)]);
    await waitFor(() => relayTasks() === '', { timeoutMs: 30_000, what: 'the edge relay and resolver stopped' });
    await deployReaching(t!, await requestImageDeploy(t!, appId, v1), (x) => x.status === 'success', 'to succeed', 90_000);
    d(['service', 'scale', '--detach', ...relays.map((r) => `${r}=1`)]);
    await waitFor(async () => (await get(edge.address).catch(() => undefined))?.text.includes('v1') === true, { timeoutMs: 30_000, what: 'v1 on the edge node' });
    const answers = await Promise.all(Array.from({ length: 12 }, () => get(edge.address)));
    expect(answers.every((a) => a.status === 200 && a.text.includes('v1'))).toBe(true);
  }, 150_000);

  it('the label removed: the edge services are gone and the listener closes', async () => {
    const put = await t!.api('PUT', `/api/nodes/${edgeId}`, { labels: labels({}) });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await waitFor(() => edgeServices().length === 0, { timeoutMs: 30_000, what: `the edge services removed (${edgeServices().join(', ')})` });
    await waitFor(async () => (await get(edge.address).then(() => false, () => true)), { timeoutMs: 30_000, what: "the edge node's listener closed" });
    // The manager keeps serving.
    expect((await get('127.0.0.1')).status).toBe(200);
  }, 90_000);

  it('labelled again with the docker CLI (no svc request), it serves again; svc uninstall removes its services and secrets', async () => {
    d(['node', 'update', '--label-add', 'svc.edge=true', edge.hostname]);
    await waitFor(async () => (await get(edge.address).catch(() => undefined))?.status === 200, { timeoutMs: 45_000, what: 'the app on the edge node again' });
    await t!.daemon.stop();
    const out = await uninstallInstance({ dataDir: t!.dataDir, instance: t!.instance, network: t!.network, dockerHost: cluster.manager.dockerHost });
    expect(out, out.join('\n')).toContain(`removed Swarm service ${t!.instance}-edge-proxy-${edgeId.slice(0, 12)}`);
    expect(out, out.join('\n')).toContain(`removed Swarm service ${t!.instance}-edge-dns-${edgeId.slice(0, 12)}`);
    expect(out.filter((l) => l.startsWith(`removed Swarm secret ${t!.instance}-edge-`))).toHaveLength(2);
    expect(edgeServices()).toEqual([]);
    expect(d(['secret', 'ls', '-q', '--filter', `label=svc.instance=${t!.instance}`])).toBe('');
    await waitFor(async () => (await get(edge.address).then(() => false, () => true)), { timeoutMs: 30_000, what: "the edge node's listener closed" });
  }, 120_000);
});
