// Questions the CLI asks a person (`svc login`): on a terminal the prompt goes to stderr and a secret is
// read without echo; from a pipe each answer is the next line of stdin, so scripts and tests can drive it
// (`printf 'me@example.com\npassword\n' | svc login URL`).
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError } from './client.js';

export interface Prompter {
  ask(question: string): Promise<string>;
  /** Like ask, without echo on a terminal. */
  secret(question: string): Promise<string>;
  close(): void;
}

export function stdioPrompter(input: NodeJS.ReadStream = process.stdin, errOut: NodeJS.WriteStream = process.stderr): Prompter {
  const tty = !!input.isTTY;
  let muted = false;
  // readline echoes through its output; muting it hides what is typed for a secret.
  const echo = new Writable({
    write(chunk, _enc, done) {
      if (!muted) errOut.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input, output: tty ? echo : undefined, terminal: tty });
  const lines: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let ended = false;
  rl.on('line', (line) => (waiting.length ? waiting.shift()!(line) : lines.push(line)));
  // Ctrl-C at a question ends the CLI as it would anywhere else (readline would only pause).
  rl.on('SIGINT', () => {
    errOut.write('\n');
    process.exit(130);
  });
  rl.on('close', () => {
    ended = true;
    for (const w of waiting.splice(0)) w(undefined);
  });
  const next = async (question: string, hide: boolean): Promise<string> => {
    if (tty) errOut.write(question);
    muted = hide && tty;
    const line = lines.length ? lines.shift() : ended ? undefined : await new Promise<string | undefined>((r) => waiting.push(r));
    if (muted) errOut.write('\n');
    muted = false;
    if (line === undefined) throw new CliError(`no answer to "${question.trim()}" (stdin ended)`);
    return line.replace(/\r$/, '');
  };
  return { ask: (q) => next(q, false), secret: (q) => next(q, true), close: () => rl.close() };
}
