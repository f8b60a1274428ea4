// The daemon's side of the DNS responder: it writes the records file atomically (the responder must
// never read half a file) and makes sure a responder process answers, starting one detached when none
// does, so that the responder outlives the daemon (restart, upgrade, crash).
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import { PROBE_NAME, TYPE, decodeResponse, encodeQuery, txtText, type DecodedResponse } from './records.js';

/** Writes `{records}` to `file` via a temp file and rename (atomic for the reader), mode 600. */
export async function writeDnsRecords(file: string, records: Record<string, string>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(records).sort()) sorted[k] = records[k];
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify({ records: sorted }, null, 2) + '\n', { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export type ProbeResult = { answered: false } | { answered: true; stateFile?: string };

/** One UDP query to host:port; undefined when no reply came within `timeoutMs`. */
export async function queryDns(port: number, name: string, type: number, timeoutMs = 300, host = '127.0.0.1'): Promise<DecodedResponse | undefined> {
  const socket = createSocket('udp4');
  const id = randomBytes(2).readUInt16BE(0);
  try {
    return await new Promise<DecodedResponse | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      socket.on('error', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      socket.on('message', (msg) => {
        const r = decodeResponse(msg);
        if (!r || r.id !== id) return;
        clearTimeout(timer);
        resolve(r);
      });
      socket.send(encodeQuery(id, name, type), port, host);
    });
  } finally {
    socket.close();
  }
}

/** Asks 127.0.0.1:port for the probe name's TXT; any reply means something answers DNS there. */
export async function probeDnsResponder(port: number, timeoutMs = 300): Promise<ProbeResult> {
  const r = await queryDns(port, PROBE_NAME, TYPE.TXT, timeoutMs);
  if (!r) return { answered: false };
  const txt = r.answers.find((a) => a.type === TYPE.TXT);
  return { answered: true, stateFile: txt ? txtText(txt.data) : undefined };
}

export interface EnsureResponderOptions {
  stateFile: string;
  port: number;
  /** The responder's stdout/stderr go here (default: `dns-responder.log` next to the state file). */
  logFile?: string;
  log: Logger;
  /** How long to wait for a started responder to answer (default 5 s). */
  startTimeoutMs?: number;
}

/**
 * Makes sure a DNS responder answers on 127.0.0.1:port; starts one detached (own process group,
 * output to a log file, unref'd) when none does. Returns whether it started one. Throws when another
 * program holds the port, or when the started responder does not answer in time (with its log tail).
 */
export async function ensureDnsResponder(opts: EnsureResponderOptions): Promise<{ started: boolean; pid?: number }> {
  const stateFile = resolve(opts.stateFile);
  let first = await probeDnsResponder(opts.port);
  if (!first.answered) first = await probeDnsResponder(opts.port, 500); // one retry: UDP may drop
  if (first.answered) {
    if (first.stateFile !== stateFile) {
      const who = first.stateFile ? `a responder serving ${first.stateFile}` : 'a DNS server that is not svc\'s responder';
      throw new Error(`SVC_DNS_PORT ${opts.port}: ${who} already answers on 127.0.0.1; pick another SVC_DNS_PORT`);
    }
    return { started: false };
  }
  const logFile = opts.logFile ?? join(dirname(stateFile), 'dns-responder.log');
  mkdirSync(dirname(stateFile), { recursive: true });
  mkdirSync(dirname(logFile), { recursive: true });
  const { command, args } = responderCommand(stateFile, opts.port);
  const fd = openSync(logFile, 'a', 0o600);
  let pid: number | undefined;
  let exited = false;
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], cwd: projectRoot(), env: process.env });
    child.on('error', (err) => {
      exited = true;
      opts.log.error('dns responder did not start', { error: err });
    });
    child.on('exit', () => (exited = true));
    child.unref();
    pid = child.pid;
  } finally {
    closeSync(fd);
  }
  opts.log.info('dns responder started', { pid, port: opts.port, stateFile, logFile });
  const end = Date.now() + (opts.startTimeoutMs ?? 5000);
  while (Date.now() < end) {
    const p = await probeDnsResponder(opts.port, 200);
    if (p.answered && p.stateFile === stateFile) return { started: true, pid };
    if (exited) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-6).join('\n') : '';
  throw new Error(`the DNS responder did not answer on 127.0.0.1:${opts.port}; last lines of ${logFile}:\n${tail}`);
}

/**
 * The command that runs the responder: `node dist/dns/main.js` next to this file when compiled, or
 * `node --import tsx src/dns/main.ts` when this module runs from its TypeScript source (tsx, vitest).
 */
export function responderCommand(stateFile: string, port: number): { command: string; args: string[] } {
  const here = fileURLToPath(import.meta.url);
  const rest = ['--state', stateFile, '--port', String(port)];
  if (here.endsWith('.ts')) {
    const tsx = createRequire(import.meta.url).resolve('tsx');
    return { command: process.execPath, args: ['--import', pathToFileURL(tsx).href, join(dirname(here), 'main.ts'), ...rest] };
  }
  return { command: process.execPath, args: [join(dirname(here), 'main.js'), ...rest] };
}

function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (dir !== dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}
