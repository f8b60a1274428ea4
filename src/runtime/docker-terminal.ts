// TerminalPort over dockerode: `exec` with Tty and stdin attached, started hijacked, so the engine hands us
// the raw duplex stream of the TTY (no multiplexing under a TTY). Nothing here runs on the host.
import type Docker from 'dockerode';
import type { Duplex } from 'node:stream';
import { LABELS } from './runtime.js';
import { call } from './docker-errors.js';
import type { AppContainer, TerminalPort, TerminalSession } from './terminal.js';

const SLOT_LABEL = 'svc.slot';

export function createDockerTerminal(docker: Docker, instance: string): TerminalPort {
  const open = openSession(docker);
  return {
    async appContainers(appId) {
      const label = [`${LABELS.managed}=true`, `${LABELS.instance}=${instance}`, `${LABELS.appId}=${appId}`, `${LABELS.role}=app`];
      const list = (await call('ps', () => docker.listContainers({ filters: { label, status: ['running'] } }))) ?? [];
      const out: AppContainer[] = list.map((c) => ({
        id: c.Id,
        name: (c.Names[0] ?? c.Id).replace(/^\//, ''),
        slot: Number(c.Labels[SLOT_LABEL] ?? 0),
        deployId: Number(c.Labels[LABELS.deploy] ?? 0),
      }));
      return out.sort((a, b) => b.deployId - a.deployId || a.slot - b.slot);
    },

    open: (target, cmd, size) => open(target.id, cmd, size),
  };
}

/** A TTY session into a container of the engine `docker` talks to (this one, or a Swarm node's through its agent). */
export function openSession(docker: Docker) {
  return async (containerId: string, cmd: string[], size: { cols: number; rows: number }): Promise<TerminalSession> => {
    const op = `exec ${containerId.slice(0, 12)} ${cmd[0] ?? ''}`;
    const exec = (await call(op, () =>
      docker.getContainer(containerId).exec({ Cmd: cmd, AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: true, Env: ['TERM=xterm-256color'] }),
    ))!;
    const stream = (await call(op, () => exec.start({ hijack: true, stdin: true, Tty: true } as Docker.ExecStartOptions)))! as unknown as Duplex;
    await exec.resize({ h: size.rows, w: size.cols }).catch(() => {});
    const exits: ((code: number) => void)[] = [];
    let ended = false;
    const finish = async () => {
      if (ended) return;
      ended = true;
      let code = -1;
      try {
        // The stream may end a moment before the engine marks the exec finished.
        for (let i = 0; i < 25; i++) {
          const s = await exec.inspect();
          if (!s.Running) {
            code = s.ExitCode ?? -1;
            break;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      } catch {
        /* the container went away with its exec: the code stays unknown */
      }
      for (const fn of exits) fn(code);
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
    const session: TerminalSession = {
      onData: (fn) => void stream.on('data', fn),
      onExit: (fn) => void exits.push(fn),
      write: (data) => {
        if (!stream.destroyed) stream.write(data);
      },
      resize: (cols, rows) => exec.resize({ h: rows, w: cols }).then(() => undefined, () => undefined),
      close: () => {
        stream.end();
        stream.destroy();
      },
    };
    return session;
  };
}
