// The port of interactive sessions into a running container (issue 22 "Terminal"): an exec with a TTY
// through the engine's API (never a host shell), its raw byte stream both ways, resizes, and the exit code.

export interface TerminalSession {
  /** Output of the TTY (stdout and stderr are one stream under a TTY). */
  onData(fn: (chunk: Buffer) => void): void;
  /** Called once the process has ended and the stream closed, with its exit code (-1 when unknown). */
  onExit(fn: (code: number) => void): void;
  write(data: Buffer | string): void;
  resize(cols: number, rows: number): Promise<void>;
  /** Hangs up: closes the stream (a shell on the TTY gets EOF and ends). */
  close(): void;
}

/** A running container of an app that a terminal can attach to. */
export interface AppContainer {
  id: string;
  name: string;
  slot: number;
  deployId: number;
  /**
   * Swarm: the host name of the node it runs on when that is not the manager svc runs on (its engine is
   * reached through the node's agent), and that node's id.
   */
  node?: string;
  nodeId?: string;
  /** Swarm: why a terminal cannot reach it now (its node's agent is not running); undefined when it can. */
  unreachable?: string;
}

export interface TerminalPort {
  /** The app's running containers of this instance, newest deploy first, then by replica slot. */
  appContainers(appId: number): Promise<AppContainer[]>;
  open(target: Pick<AppContainer, 'id' | 'nodeId'>, cmd: string[], size: { cols: number; rows: number }): Promise<TerminalSession>;
}
