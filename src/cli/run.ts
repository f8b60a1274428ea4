// `svc run APP [--timeout S] [--detach] -- CMD [ARG...]`: a one-off command in the app's live release
// (POST /api/apps/{id}/run). Its output is printed as it comes (stdout to stdout, stderr to stderr) and the
// CLI exits with the command's exit status, like `heroku run`. The arguments after `--` are sent as an
// argument array: they run as given, no shell in between (write `sh -c '...'` to want one).
import { appByName, CliError, type Client } from './client.js';
import { readSse } from './sse.js';

/** Exit status when the command ran out of time (as timeout(1) does). */
export const TIMED_OUT_STATUS = 124;

export async function runCommand(client: Client, o: { app: string; command: string[]; timeoutSeconds?: number; detach: boolean }): Promise<number> {
  const app = await appByName(client, o.app);
  const body = JSON.stringify({ command: o.command, ...(o.timeoutSeconds ? { timeout_seconds: o.timeoutSeconds } : {}) });
  const res = await client.raw(`/api/apps/${app.id}/run${o.detach ? '?detach=true' : ''}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (o.detach) {
    const run = (await res.json()) as { id: number };
    process.stdout.write(`run ${run.id} started; see GET /api/apps/${app.id}/runs/${run.id}\n`);
    return 0;
  }
  if (!res.body) throw new CliError('the daemon sent no output stream');
  for await (const e of readSse(res.body)) {
    if (e.event === 'stdout') process.stdout.write(`${e.data}\n`);
    else if (e.event === 'stderr') process.stderr.write(`${e.data}\n`);
    else if (e.event === 'exit') {
      const end = JSON.parse(e.data) as { status: string; exit_code: number | null; error: string | null };
      if (end.status === 'timed_out') {
        process.stderr.write(`svc: the command timed out\n`);
        return TIMED_OUT_STATUS;
      }
      if (end.exit_code === null) {
        process.stderr.write(`svc: ${end.error ?? `the command ended as ${end.status}`}\n`);
        return 1;
      }
      return end.exit_code;
    }
  }
  throw new CliError('the stream ended before the command did (the daemon stopped?); the run goes on: see GET /api/apps/ID/runs');
}
