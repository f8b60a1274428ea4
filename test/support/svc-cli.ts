// The `svc` CLI as a user runs it, for the journeys and other end-to-end tests: `src/cli.ts` through tsx,
// in `cwd`, with only PATH, HOME and the given environment (so `.env` in `cwd` is what it reads).
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `svc ARGS...`; resolves with its exit code and output (never rejects on a non-zero exit). */
export function runSvc(args: string[], o: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'src/cli.ts'), ...args],
      { cwd: o.cwd, env: { PATH: process.env.PATH, HOME: o.cwd, ...o.env }, timeout: o.timeoutMs ?? 180_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
