// Another node's disk, for a restore of the services held there and for a service's first directory there
// (docs/decisions/0042-service-data-on-other-nodes.md): a short-lived Swarm
// service `<instance>-disk-<tag>` pinned to the node (busybox of the probe image, `sleep`, the node's `/`
// bind-mounted at NODE_ROOT: the data directory may not exist there yet, and Swarm refuses a bind mount
// whose source is missing), and every step an exec of busybox in its container or the engine's
// `PUT /containers/{id}/archive`, through the node's agent. Paths are checked (relative to the data
// directory, plain) and passed as arguments, never a shell string. `close` removes the service; a leftover
// of a daemon that died is replaced by the next open of the same tag.
import type Docker from 'dockerode';
import { posix } from 'node:path';
import { Header } from 'tar';
import type { Logger } from '../log.js';
import { call } from './docker-errors.js';
import { createExecOps } from './docker-exec.js';
import { LABELS, type DataNode, type NodeDisk, type RegistryAuthLookup } from './runtime.js';
import { currentTask, type TaskDoc } from './swarm-map.js';
import { agentFailure } from './swarm-agents.js';

export const DISK_ROLE = 'disk';
const RUNNING_WAIT_MS = 60_000;
/** Where the helper sees the node's `/`: the one directory sure to exist on a fresh node. */
export const NODE_ROOT = '/svc-node-root';

/** Pure: the name of the helper of one tag (`restore-12`). */
export const diskHelperName = (instance: string, tag: string) => `${instance}-disk-${tag}`;

/** Pure: `rel` under `dataDir`, or a thrown error for anything but a plain relative path. */
export function diskPath(dataDir: string, rel: string): string {
  const parts = rel.split('/');
  if (!rel || rel.startsWith('/') || rel.length > 512 || parts.some((p) => p === '' || p === '.' || p === '..') || !/^[A-Za-z0-9._/-]+$/.test(rel)) {
    throw new Error(`"${rel.slice(0, 80)}" is not a plain path inside the data directory`);
  }
  return posix.join(dataDir, rel);
}

/** Pure: what the helper names `rel` (under the data directory) by, through its mount of the node's `/`. */
export const helperPath = (dataDir: string, rel: string) => posix.join(NODE_ROOT, diskPath(dataDir, rel));

/**
 * Pure: the `mkdir -p -m 700` arguments that make the data directory and every component of `rel` with mode
 * 700 (`-m` applies to the last component of each argument only, so each level is an argument of its own).
 */
export function mkdirArgs(dataDir: string, rel: string): string[] {
  diskPath(dataDir, rel);
  const parts = rel.split('/');
  return ['mkdir', '-p', '-m', '700', posix.join(NODE_ROOT, dataDir), ...parts.map((_, i) => helperPath(dataDir, parts.slice(0, i + 1).join('/')))];
}

/** Pure: a tar holding one file `name` (a base name) with `content` and `mode`, owned by root (tar's encoder). */
export function oneFileTar(name: string, content: string, mode: number): Buffer {
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name === '.' || name === '..') throw new Error(`"${name}" is not a plain file name`);
  const body = Buffer.from(content, 'utf8');
  const h = new Header({ path: name, type: 'File', mode, size: body.length, mtime: new Date(), uid: 0, gid: 0 });
  h.encode();
  const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);
  return Buffer.concat([h.block!, body, pad(body.length), Buffer.alloc(1024)]);
}

/** Pure: the helper's Swarm service. */
export function diskHelperSpec(i: { instance: string; tag: string; image: string; node: string; dataDir: string }) {
  const labels = { [LABELS.managed]: 'true', [LABELS.instance]: i.instance, [LABELS.role]: DISK_ROLE };
  return {
    Name: diskHelperName(i.instance, i.tag),
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: i.image,
        Command: ['/bin/busybox', 'sleep', '2147483647'],
        Labels: labels,
        User: '0:0',
        Init: true,
        // The node's `/`, not the data directory: on a node that never held a service it does not exist yet.
        Mounts: [{ Type: 'bind' as const, Source: '/', Target: NODE_ROOT }],
      },
      RestartPolicy: { Condition: 'none' as const },
      Placement: { Constraints: [`node.id==${i.node}`] },
    },
    Mode: { Replicated: { Replicas: 1 } },
  };
}

export interface NodeDiskOptions {
  docker: Docker;
  instance: string;
  /** An image with /bin/busybox (SVC_PROBE_IMAGE). */
  image: string;
  registryAuth?: RegistryAuthLookup;
  client(nodeId: string): Promise<Docker>;
  log: Logger;
}

export async function openNodeDisk(o: NodeDiskOptions, node: DataNode, dataDir: string, tag: string): Promise<NodeDisk> {
  const d = o.docker;
  const spec = diskHelperSpec({ instance: o.instance, tag, image: o.image, node: node.id, dataDir });
  const remove = async () => {
    await call(`service rm ${spec.Name}`, () => d.getService(spec.Name).remove(), [404]);
  };
  // The agent first: a node that is down or whose agent does not run fails here at once, before a helper
  // is made that could wait a minute for a node that is not there.
  const engine = await o.client(node.id).catch((err: unknown) => Promise.reject(agentFailure(node.hostname, err)));
  await remove(); // a leftover of the same tag (a daemon that died): replaced
  const auth = o.registryAuth?.(o.image);
  try {
    const made = (await call(`service create ${spec.Name}`, () => (auth ? d.createService(auth as never, spec as never) : d.createService(spec as never)) as Promise<{ id: string }>))!;
    const end = Date.now() + RUNNING_WAIT_MS;
    let container: string | undefined;
    for (;;) {
      const t = currentTask(((await call('task ls', () => d.listTasks({ filters: { service: [made.id] } }))) ?? []) as TaskDoc[]);
      if (t?.Status?.State === 'running') container = t.Status.ContainerStatus?.ContainerID;
      if (container) break;
      if (t && ['failed', 'rejected', 'shutdown', 'complete'].includes(t.Status?.State ?? '')) throw new Error(`the helper on node ${node.hostname} could not start: ${t.Status?.Err ?? t.Status?.State}`);
      if (Date.now() > end) throw new Error(`the helper on node ${node.hostname} did not start within ${RUNNING_WAIT_MS / 1000} s (task ${t?.Status?.State ?? 'not created'})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const ops = createExecOps(engine);
    const id = container;
    const run = async (cmd: string[]) => {
      const r = await ops.exec(id, ['/bin/busybox', ...cmd]).catch((err: unknown) => Promise.reject(agentFailure(node.hostname, err)));
      return r;
    };
    const must = async (what: string, cmd: string[]) => {
      const r = await run(cmd);
      if (r.exitCode !== 0) throw new Error(`${what} on node ${node.hostname} failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').slice(-2).join(' ')}`);
    };
    const at = (rel: string) => helperPath(dataDir, rel);
    const putTar = async (dir: string, tar: NodeJS.ReadableStream | Buffer) => {
      await engine
        .getContainer(id)
        .putArchive(tar as never, { path: dir })
        .catch((err: unknown) => Promise.reject(agentFailure(node.hostname, err)));
    };
    return {
      async exists(rel) {
        return (await run(['test', '-e', at(rel)])).exitCode === 0;
      },
      mkdir: (rel) => must(`mkdir ${rel}`, mkdirArgs(dataDir, rel)),
      async writeFile(rel, content, mode) {
        await putTar(posix.dirname(at(rel)), oneFileTar(posix.basename(rel), content, mode));
      },
      async rename(from, to) {
        if ((await run(['test', '-e', at(to)])).exitCode === 0) throw new Error(`rename on node ${node.hostname}: ${to} exists`);
        await must(`rename ${from} to ${to}`, ['mv', at(from), at(to)]);
      },
      remove: (rel) => must(`rm ${rel}`, ['rm', '-rf', at(rel)]),
      unpack: (rel, tar) => putTar(at(rel), tar),
      async close() {
        await remove();
      },
    };
  } catch (err) {
    await remove().catch(() => {});
    throw err;
  }
}
