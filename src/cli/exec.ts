// `svc exec APP [--replica N] -- CMD [ARG...]`: a command in the app's running container with a raw TTY, over
// the daemon's WebSocket (API.md "Terminal"). The local terminal goes raw while it runs, so keys such as
// Ctrl-C reach the container; the CLI exits with the command's exit code.
import WebSocket from 'ws';
import { appByName, CliError, type Client } from './client.js';

export async function execCommand(client: Client, o: { app: string; cmd: string[]; replica?: number }): Promise<number> {
  const app = await appByName(client, o.app);
  const url = new URL(`/api/apps/${app.id}/exec`, client.url.replace(/^http/, 'ws'));
  for (const a of o.cmd.length ? o.cmd : ['sh']) url.searchParams.append('cmd', a);
  const tty = process.stdin.isTTY === true;
  url.searchParams.set('cols', String(process.stdout.columns ?? 80));
  url.searchParams.set('rows', String(process.stdout.rows ?? 24));
  if (o.replica !== undefined) url.searchParams.set('replica', String(o.replica));

  const ws = new WebSocket(url, { headers: client.headers?.() ?? {} });
  return new Promise<number>((resolve, reject) => {
    let code = 1;
    const restore = () => {
      if (tty) process.stdin.setRawMode(false);
      process.stdin.pause();
      process.stdout.off('resize', onResize);
    };
    const onResize = () => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'resize', cols: process.stdout.columns, rows: process.stdout.rows }));
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (b: Buffer) => (text += b.toString('utf8')));
      res.on('end', () => {
        let sentence = `${res.statusCode} ${res.statusMessage ?? ''}`.trim();
        try {
          sentence = (JSON.parse(text) as { error?: string }).error ?? sentence;
        } catch {
          /* keep the status line */
        }
        reject(new CliError(sentence));
      });
    });
    ws.on('error', (err) => reject(new CliError(`cannot reach svc at ${client.url}: ${err.message}`)));
    ws.on('open', () => {
      if (tty) process.stdin.setRawMode(true);
      process.stdin.on('data', (b: Buffer) => ws.readyState === WebSocket.OPEN && ws.send(b));
      // No TTY here (a pipe, a script): its end is an end-of-file for the command.
      process.stdin.on('end', () => ws.readyState === WebSocket.OPEN && ws.send(Buffer.from([4])));
      process.stdin.resume();
      process.stdout.on('resize', onResize);
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        process.stdout.write(data as Buffer);
        return;
      }
      const m = JSON.parse(String(data)) as { type: string; code?: number; error?: string };
      if (m.type === 'exit' && typeof m.code === 'number') code = m.code;
      if (m.type === 'error') process.stderr.write(`svc: ${m.error}\n`);
    });
    ws.on('close', () => {
      restore();
      resolve(code);
    });
  });
}
