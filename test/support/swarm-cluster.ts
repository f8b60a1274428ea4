// A three-node Docker Swarm on this one machine for the integration tests (../shared/notes/multi-node-swarm.md):
// each node is a dockerd of its own in a network namespace of its own (its own UTS namespace too, so the
// nodes' host names differ), the namespaces joined by a Linux bridge; node 1 is the manager and runs
// Debian's docker-registry for the cluster. The machine's own dockerd and docker0 are never touched.
// Everything carries one prefix plus a run id (`svsw<id>`): `destroyCluster` removes what one run made, and
// `sweepClusters` (called first by `createCluster`) removes what an earlier run left behind when its test
// process died, judged by the owner pid recorded in the run's state directory, so a live run is never
// swept. Needs root (network namespaces, iptables) and Debian's docker.io and docker-registry.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './wait.js';
import { DNS_IMAGE, ensureDnsImage } from './dns-image.js';

const PREFIX = 'svsw';
const STATE_ROOT = '/tmp';
const REGISTRY_PORT = 5000;
/** A second registry on the manager that wants a login (htpasswd), for private images. */
const PRIVATE_REGISTRY_PORT = 5001;
const PRIVATE_USER = 'cluster-bot';

export interface ClusterNode {
  /** 1-based; node 1 is the manager. */
  index: number;
  /** The node's host name (as Swarm reports it), e.g. `svsw1a2b-n2`. */
  hostname: string;
  netns: string;
  /** The node's address on the cluster bridge (reachable from the host). */
  address: string;
  /** `unix:///tmp/svsw<id>/n<i>/docker.sock`: DOCKER_HOST of this node's engine. */
  dockerHost: string;
  socket: string;
  dir: string;
  /**
   * With `createCluster`'s `ownDisk`: the host directory this node sees at that path (its own disk, as a
   * separate machine has); undefined for the manager, which sees the host's.
   */
  disk?: string;
}

export interface Cluster {
  id: string;
  nodes: ClusterNode[];
  manager: ClusterNode;
  /** `host:port` of the cluster's registry (on the manager; every node trusts it over plain HTTP). */
  registry: string;
  /** A registry that wants a login (every node trusts it over plain HTTP too), and its account. */
  privateRegistry: { address: string; username: string; password: string };
  /** `docker` CLI against one node's engine (argument array, never a shell string). */
  docker(node: ClusterNode, args: string[], input?: Buffer): string;
  /** Kills a node's engine (SIGKILL, as a machine that is lost) and its containers with it. */
  killNode(node: ClusterNode): Promise<void>;
  /**
   * Stops a node's engine as `systemctl stop docker` does (SIGTERM): it stops its containers and tears down
   * their overlay endpoints, while the managers still list its tasks until Swarm marks the node down.
   */
  stopNodeEngine(node: ClusterNode): Promise<void>;
  /** Copies an image of the machine's engine into the manager and pushes it to the registry; returns its cluster reference. */
  pushImage(localRef: string): string;
  /** The same for several images in one `docker save` (layers they share are copied once); their references in order. */
  pushImages(localRefs: string[]): string[];
  /** The same into the private registry, pushed with its login; the manager keeps the image, no worker has it. */
  pushPrivateImage(localRef: string): string;
}

const sh = (cmd: string, args: string[], opts: { input?: Buffer; ignore?: boolean } = {}): string => {
  try {
    return execFileSync(cmd, args, { input: opts.input, stdio: [opts.input ? 'pipe' : 'ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30, timeout: 120_000 }).toString();
  } catch (err) {
    if (opts.ignore) return '';
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`${cmd} ${args.join(' ')}: ${e.stderr?.toString().trim() || e.message}`);
  }
};

const succeeds = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const readPid = (file: string) => {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
};

/** Names of one run's objects (interface names stay within Linux's 15 characters). */
const names = (id: string) => ({
  dir: join(STATE_ROOT, `${PREFIX}${id}`),
  bridge: `${PREFIX}${id}br`,
  netns: (i: number) => `${PREFIX}${id}-n${i}`,
  hostVeth: (i: number) => `${PREFIX}${id}h${i}`,
  nodeVeth: (i: number) => `${PREFIX}${id}c${i}`,
});

/**
 * The cgroup every container of a node's engine runs under (`--cgroup-parent`). SIGKILLing a node's dockerd,
 * containerd and shims leaves its containers' processes running, reparented to init (found: a dozen
 * orphaned `docker-init`/httpd and agent Caddy processes after a few cluster runs); their cgroup finds them.
 */
const cgroupOf = (netns: string) => `/${netns}`;

/** The directories of a cgroup under every hierarchy mounted (cgroup v1 controllers, or v2's one tree). */
function cgroupDirs(cgroup: string): string[] {
  const root = '/sys/fs/cgroup';
  const tops = existsSync(join(root, 'cgroup.controllers')) ? [root] : readdirSync(root).map((c) => join(root, c));
  return tops.map((t) => join(t, cgroup)).filter((d) => existsSync(d));
}

/** The cgroup and its children, deepest first (children must go before their parent). */
function cgroupTree(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(...cgroupTree(join(dir, e.name)));
  out.push(dir);
  return out;
}

/** SIGKILLs every process under the cgroup (bounded wait), then removes its directories. Tolerates what is gone. */
function killCgroup(cgroup: string): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = new Set<number>();
    for (const dir of cgroupDirs(cgroup)) {
      for (const d of cgroupTree(dir)) {
        try {
          for (const p of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (p) pids.add(Number(p));
        } catch {
          /* gone */
        }
      }
    }
    if (pids.size === 0 || Date.now() > deadline) break;
    for (const pid of pids) killQuietly(pid);
    execFileSync('sleep', ['0.05']);
  }
  for (const dir of cgroupDirs(cgroup)) {
    for (const d of cgroupTree(dir)) {
      try {
        rmdirSync(d);
      } catch {
        /* still busy or gone: the next sweep tries again */
      }
    }
  }
}

/** A /24 for the bridge that no route of the host uses yet. */
function freeSubnet(): string {
  const routes = sh('ip', ['-4', 'route', 'show']);
  for (let n = 0; n < 64; n++) {
    const third = (randomBytes(1)[0]! % 200) + 20;
    const base = `10.234.${third}`;
    if (!routes.includes(`${base}.`)) return base;
  }
  throw new Error('no free 10.234.x.0/24 subnet for the test cluster');
}

const killQuietly = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
};

/** SIGKILLs a node's dockerd and its own containerd and shims (what runs from its exec root); returns the dockerd pid. */
function killEngine(nodeDir: string): number | undefined {
  const pid = readPid(join(nodeDir, 'docker.pid'));
  if (pid && alive(pid)) killQuietly(pid);
  for (const p of sh('pgrep', ['-f', join(nodeDir, 'exec')], { ignore: true }).split('\n').filter(Boolean)) killQuietly(Number(p));
  return pid;
}

/** Removes one run's objects; each step tolerates what is already gone. */
export function destroyRun(id: string, nodeCount = 3): void {
  const n = names(id);
  const pids: number[] = [];
  for (let i = 1; i <= nodeCount; i++) {
    const pid = killEngine(join(n.dir, `n${i}`));
    if (pid) pids.push(pid);
  }
  for (const file of ['registry.pid', 'private-registry.pid']) {
    const reg = readPid(join(n.dir, file));
    if (reg && alive(reg)) {
      killQuietly(reg);
      pids.push(reg);
    }
  }
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) execFileSync('sleep', ['0.1']);
  // The nodes' containers outlive their engines: kill them by their cgroup.
  for (let i = 1; i <= nodeCount; i++) killCgroup(cgroupOf(n.netns(i)));
  for (let i = 1; i <= nodeCount; i++) {
    sh('ip', ['netns', 'del', n.netns(i)], { ignore: true });
    sh('ip', ['link', 'del', n.hostVeth(i)], { ignore: true });
  }
  sh('ip', ['link', 'del', n.bridge], { ignore: true });
  // The rule is inserted once per run; delete until none is left.
  for (let k = 0; k < 5 && succeeds('iptables', ['-D', 'FORWARD', '-i', n.bridge, '-o', n.bridge, '-j', 'ACCEPT']); k++);
  // Mounts dockerd left under its data root (overlay layers, netns bind mounts) before the files go.
  const mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m.startsWith(n.dir + '/'))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) sh('umount', ['-l', m], { ignore: true });
  rmSync(n.dir, { recursive: true, force: true });
}

/** Removes leftovers of earlier runs whose test process is gone (never a live run's). */
export function sweepClusters(): void {
  for (const entry of readdirSync(STATE_ROOT)) {
    const m = /^svsw([0-9a-f]{4})$/.exec(entry);
    if (!m) continue;
    const owner = readPid(join(STATE_ROOT, entry, 'owner.pid'));
    if (owner && alive(owner)) continue;
    destroyRun(m[1]!);
  }
  // Namespaces or links of a run whose directory is already gone.
  for (const line of sh('ip', ['netns', 'list'], { ignore: true }).split('\n')) {
    const m = /^svsw([0-9a-f]{4})-n\d/.exec(line);
    if (m && !existsSync(join(STATE_ROOT, `svsw${m[1]}`))) destroyRun(m[1]!);
  }
}

function startEngine(node: ClusterNode, registries: string[], ownDisk?: string): void {
  mkdirSync(join(node.dir, 'data'), { recursive: true });
  mkdirSync(join(node.dir, 'exec'), { recursive: true });
  const log = openSync(join(node.dir, 'dockerd.log'), 'a');
  // A disk of its own at `ownDisk`: the engine (and its containerd, so every bind mount of its containers)
  // runs in a mount namespace of its own with node.disk bind-mounted there, private to it.
  const disk = node.disk && ownDisk ? ['--mount', '--propagation', 'private'] : [];
  const mountDisk = node.disk && ownDisk ? ['mount --bind "$1" "$2" && shift 2 &&', node.disk, ownDisk] : ['', ''];
  // nsenter --net, not `ip netns exec` (it remounts /sys and dockerd then finds no devices cgroup);
  // unshare --uts gives the node a host name of its own.
  const child = spawn(
    'nsenter',
    [
      `--net=/var/run/netns/${node.netns}`,
      'unshare', '--uts', ...disk, '--',
      'sh', '-c', `hostname "$0" && ${mountDisk[0]} exec "$@"`, node.hostname,
      ...mountDisk.slice(1).filter(Boolean),
      'dockerd',
      '--data-root', join(node.dir, 'data'),
      '--exec-root', join(node.dir, 'exec'),
      '--cgroup-parent', cgroupOf(node.netns),
      '--pidfile', join(node.dir, 'docker.pid'),
      '-H', node.dockerHost,
      '--iptables=false', '--ip-masq=false',
      ...registries.flatMap((r) => ['--insecure-registry', r]),
    ],
    { stdio: ['ignore', log, log], detached: true },
  );
  child.unref();
}

const engineAnswers = (node: ClusterNode) => {
  try {
    execFileSync('docker', ['-H', node.dockerHost, 'version', '--format', '{{.Server.Version}}'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
};

/** Builds the cluster: bridge, three namespaced engines, the registry on the manager, swarm init and joins. */
/**
 * `ownDisk`: an existing host directory (a test daemon's data dir) that every worker sees as a directory of
 * its own (`ClusterNode.disk`, empty at first), as on separate machines; the manager sees the host's.
 */
export async function createCluster(nodeCount = 3, opts: { ownDisk?: string } = {}): Promise<Cluster> {
  sweepClusters();
  // The edge's resolver image (swarmDaemonEnv pushes it): built here, where waiting is allowed.
  await ensureDnsImage();
  if (!existsSync('/usr/bin/docker-registry')) throw new Error('docker-registry is missing: run scripts/install-host-packages.sh');
  const id = randomBytes(2).toString('hex');
  const n = names(id);
  mkdirSync(n.dir, { recursive: true });
  writeFileSync(join(n.dir, 'owner.pid'), String(process.pid));
  const base = freeSubnet();
  const registry = `${base}.11:${REGISTRY_PORT}`;
  const privateRegistry = { address: `${base}.11:${PRIVATE_REGISTRY_PORT}`, username: PRIVATE_USER, password: randomBytes(12).toString('hex') };
  const nodes: ClusterNode[] = [];
  try {
    sh('ip', ['link', 'add', n.bridge, 'type', 'bridge']);
    sh('ip', ['addr', 'add', `${base}.1/24`, 'dev', n.bridge]);
    sh('ip', ['link', 'set', n.bridge, 'up']);
    // Docker sets the host's FORWARD policy to DROP and bridged frames pass iptables: let the nodes talk.
    sh('iptables', ['-I', 'FORWARD', '1', '-i', n.bridge, '-o', n.bridge, '-j', 'ACCEPT']);
    for (let i = 1; i <= nodeCount; i++) {
      const node: ClusterNode = {
        index: i,
        hostname: n.netns(i),
        netns: n.netns(i),
        address: `${base}.${10 + i}`,
        dir: join(n.dir, `n${i}`),
        socket: join(n.dir, `n${i}`, 'docker.sock'),
        dockerHost: `unix://${join(n.dir, `n${i}`, 'docker.sock')}`,
        disk: opts.ownDisk && i > 1 ? join(n.dir, `n${i}`, 'disk') : undefined,
      };
      if (node.disk) mkdirSync(node.disk, { recursive: true, mode: 0o700 });
      sh('ip', ['netns', 'add', node.netns]);
      sh('ip', ['link', 'add', n.hostVeth(i), 'type', 'veth', 'peer', 'name', n.nodeVeth(i)]);
      sh('ip', ['link', 'set', n.hostVeth(i), 'master', n.bridge, 'up']);
      sh('ip', ['link', 'set', n.nodeVeth(i), 'netns', node.netns]);
      const inNs = (args: string[]) => sh('ip', ['netns', 'exec', node.netns, ...args]);
      inNs(['ip', 'addr', 'add', `${node.address}/24`, 'dev', n.nodeVeth(i)]);
      inNs(['ip', 'link', 'set', n.nodeVeth(i), 'up']);
      inNs(['ip', 'link', 'set', 'lo', 'up']);
      inNs(['ip', 'route', 'add', 'default', 'via', `${base}.1`]);
      nodes.push(node);
    }
    startRegistry(n.dir, nodes[0]!, registry);
    startRegistry(n.dir, nodes[0]!, privateRegistry.address, privateRegistry);
    for (const node of nodes) startEngine(node, [registry, privateRegistry.address], opts.ownDisk);
    await waitFor(() => nodes.every(engineAnswers), { timeoutMs: 60_000, what: 'the cluster engines to answer' });
    const manager = nodes[0]!;
    const d = (node: ClusterNode, args: string[], input?: Buffer) => sh('docker', ['-H', node.dockerHost, ...args], { input });
    d(manager, ['swarm', 'init', '--advertise-addr', manager.address, '--dispatcher-heartbeat', '1s']);
    const token = d(manager, ['swarm', 'join-token', '-q', 'worker']).trim();
    for (const w of nodes.slice(1)) d(w, ['swarm', 'join', '--token', token, `${manager.address}:2377`]);
    await waitFor(() => d(manager, ['node', 'ls', '--format', '{{.Status}}']).trim().split('\n').filter((s) => s === 'Ready').length === nodeCount, {
      timeoutMs: 30_000,
      what: 'every node Ready',
    });
    const pushImages = (localRefs: string[]) => {
      d(manager, ['load'], execFileSync('docker', ['save', ...localRefs], { maxBuffer: 2 ** 31 }));
      return localRefs.map((localRef) => {
        const target = `${registry}/${localRef}`;
        d(manager, ['tag', localRef, target]);
        d(manager, ['push', target]);
        return target;
      });
    };
    return {
      id,
      nodes,
      manager,
      registry,
      privateRegistry,
      docker: d,
      async killNode(node) {
        killEngine(node.dir);
        await waitFor(() => !engineAnswers(node), { timeoutMs: 15_000, what: `${node.hostname}'s engine to stop` });
        // A lost machine's containers are gone too (killing the shims leaves them running otherwise).
        killCgroup(cgroupOf(node.netns));
      },
      async stopNodeEngine(node) {
        const pid = readPid(join(node.dir, 'docker.pid'));
        if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
        await waitFor(() => !pid || !alive(pid), { timeoutMs: 30_000, intervalMs: 100, what: `${node.hostname}'s engine to stop` });
        killCgroup(cgroupOf(node.netns)); // anything its shutdown left
      },
      pushImage(localRef) {
        return pushImages([localRef])[0]!;
      },
      pushImages,
      pushPrivateImage(localRef) {
        const target = `${privateRegistry.address}/${localRef}`;
        // The login goes to a CLI config of this run (--config), never the machine's ~/.docker.
        const cli = (args: string[], input?: Buffer) => sh('docker', ['--config', join(n.dir, 'cli'), '-H', manager.dockerHost, ...args], { input });
        d(manager, ['load'], execFileSync('docker', ['save', localRef], { maxBuffer: 1 << 30 }));
        d(manager, ['tag', localRef, target]);
        cli(['login', '--username', privateRegistry.username, '--password-stdin', privateRegistry.address], Buffer.from(privateRegistry.password));
        cli(['push', target]);
        return target;
      },
    };
  } catch (err) {
    destroyRun(id, nodeCount);
    throw err;
  }
}

/** Debian's docker-registry in the manager's namespace; with `login`, behind htpasswd (bcrypt, cost 4). */
function startRegistry(dir: string, manager: ClusterNode, registry: string, login?: { username: string; password: string }): void {
  const name = login ? 'private-registry' : 'registry';
  const config = join(dir, `${name}.yml`);
  const auth: string[] = [];
  if (login) {
    const htpasswd = join(dir, `${name}.htpasswd`);
    writeFileSync(htpasswd, sh('htpasswd', ['-niB', '-C', '4', login.username], { input: Buffer.from(login.password) }).trim() + '\n');
    auth.push('auth:', '  htpasswd:', '    realm: svc-cluster', `    path: ${htpasswd}`);
  }
  writeFileSync(
    config,
    ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${join(dir, name)}`, '  delete:', '    enabled: true', 'http:', `  addr: ${registry}`, ...auth, ''].join('\n'),
  );
  const log = openSync(join(dir, `${name}.log`), 'a');
  const child = spawn('nsenter', [`--net=/var/run/netns/${manager.netns}`, 'docker-registry', 'serve', config], { stdio: ['ignore', log, log], detached: true });
  writeFileSync(join(dir, `${name}.pid`), String(child.pid));
  child.unref();
}

/**
 * Readies the cluster for a daemon with SVC_RUNTIME=swarm and returns that daemon's environment: each
 * worker's engine socket in the node label `svc.engine-socket` (this cluster's engines listen on sockets of
 * their own, as rootless Docker's do; the node agents mount it), the manager's engine, the cluster's
 * registry, and the probe, proxy and resolver images as references in that registry (no other one is reachable;
 * with `ownResolver` no resolver image: svc builds its own).
 */
export function swarmDaemonEnv(c: Cluster, images: { probe: string; proxy: string; ownResolver?: boolean }): Record<string, string> {
  for (const w of c.nodes.slice(1)) c.docker(c.manager, ['node', 'update', '--label-add', `svc.engine-socket=${w.socket}`, w.hostname]);
  const env = { DOCKER_HOST: c.manager.dockerHost, SVC_RUNTIME: 'swarm', SVC_PROBE_IMAGE: images.probe, SVC_REGISTRY: c.registry, SVC_PROXY_IMAGE: images.proxy };
  // `ownResolver`: SVC_RESOLVER_IMAGE unset, so svc builds its own on the manager's engine and pushes it to the registry.
  return images.ownResolver ? env : { ...env, SVC_RESOLVER_IMAGE: c.pushImage(DNS_IMAGE) };
}

/** Tears the cluster down (idempotent). */
export function destroyCluster(c: Cluster | undefined): void {
  if (c) destroyRun(c.id, c.nodes.length);
}
