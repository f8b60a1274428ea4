// `exec` and `execToFile` over one dockerode client: the local engine's (docker.ts), or another Swarm node's
// reached through its agent (swarm-agents.ts), so both run the very same code. Stdout and stderr attached
// (multiplexed), no stdin, the exit code read once the engine says the exec ended.
import type Docker from 'dockerode';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { ExecResult, Runtime } from './runtime.js';
import { call, engineError } from './docker-errors.js';
import { checkContainerRef as ref } from './references.js';
import { demuxToFile } from './docker-demux.js';

export type ExecOps = Pick<Runtime, 'exec' | 'execToFile'>;

export function createExecOps(docker: Docker): ExecOps {
  /** Creates and starts an exec with stdout and stderr attached (multiplexed). */
  const startExec = async (nameOrId: string, cmd: string[], o: { env?: Record<string, string>; user?: string }) => {
    const op = `exec ${nameOrId} ${cmd[0] ?? ''}`.trim();
    const container = docker.getContainer(ref(nameOrId));
    const exec = (await call(op, () =>
      container.exec({
        Cmd: cmd,
        AttachStdout: true,
        AttachStderr: true,
        Env: o.env ? Object.entries(o.env).map(([k, v]) => `${k}=${v}`) : undefined,
        User: o.user,
      }),
    ))!;
    const stream = (await call(op, () => exec.start({ hijack: true, stdin: false })))!;
    return { op, exec, stream };
  };

  /** The exit code once the engine reports the exec finished (its stream may end a moment before). */
  const exitCodeOf = async (op: string, exec: Docker.Exec): Promise<number> => {
    let state = await call(op, () => exec.inspect());
    for (let i = 0; i < 50 && state?.Running; i++) {
      await new Promise((r) => setTimeout(r, 20));
      state = await call(op, () => exec.inspect());
    }
    return state?.ExitCode ?? -1;
  };

  return {
    async exec(nameOrId, cmd, o = {}): Promise<ExecResult> {
      const { op, exec, stream } = await startExec(nameOrId, cmd, o);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        docker.modem.demuxStream(stream, { write: (b: Buffer) => out.push(b) } as never, { write: (b: Buffer) => err.push(b) } as never);
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', (e) => reject(engineError(op, e)));
      });
      return {
        exitCode: await exitCodeOf(op, exec),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      };
    },

    async execToFile(nameOrId, cmd, path, o = {}) {
      const { op, exec, stream } = await startExec(nameOrId, cmd, o);
      const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
      try {
        // A file error (ENOSPC) keeps its code: the backup names a full disk as such.
        const stderr = await demuxToFile(stream as Readable, file);
        file.end();
        await once(file, 'close');
        const fh = await open(path, 'r+');
        await fh.sync().finally(() => fh.close());
        return { exitCode: await exitCodeOf(op, exec), stderr };
      } catch (err) {
        stream.destroy();
        file.destroy();
        throw err;
      }
    },
  };
}
