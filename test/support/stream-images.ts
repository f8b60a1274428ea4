// The stream test app (issue 37): a WebSocket echo and a server-sent-events feed in one static C binary
// (test/support/images/stream-app/server.c, built here with the host's gcc -static), `FROM scratch`, no
// registry. Two tags that differ only in the VERSION they answer with, so a client can tell which version
// it reached. Built once and reused by tag.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Runtime } from '../../src/runtime/runtime.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { silentLogger } from '../../src/log.js';

export const STREAM_V1 = 'svc-test/stream:v1';
export const STREAM_V2 = 'svc-test/stream:v2';
/** The port the stream app listens on. */
export const STREAM_PORT = 3000;
const SOURCE = fileURLToPath(new URL('./images/stream-app/server.c', import.meta.url));

let once: Promise<void> | undefined;

/** Builds the missing stream images (skips tags the engine already has). Memoised per process. */
export function ensureStreamImages(runtime: Runtime = createDockerRuntime({ log: silentLogger })): Promise<void> {
  return (once ??= build(runtime).catch((err) => {
    once = undefined;
    throw err;
  }));
}

async function build(runtime: Runtime) {
  const missing = [];
  for (const [tag, version] of [[STREAM_V1, 'v1'], [STREAM_V2, 'v2']] as const) if (!(await runtime.hasImage(tag))) missing.push({ tag, version });
  if (missing.length === 0) return;
  const dir = await mkdtemp(join(tmpdir(), 'svc-test-stream-'));
  try {
    execFileSync('gcc', ['-static', '-O2', '-Wall', '-o', join(dir, 'stream-server'), SOURCE], { stdio: 'pipe' });
    for (const { tag, version } of missing) {
      writeFileSync(join(dir, 'Dockerfile'), `FROM scratch\nCOPY stream-server /stream-server\nENV VERSION=${version}\nEXPOSE ${STREAM_PORT}\nCMD ["/stream-server"]\n`);
      const log: string[] = [];
      await runtime.build(dir, tag, (l) => log.push(l)).catch((err: Error) => {
        throw new Error(`building ${tag} failed: ${err.message}\n${log.join('\n')}`);
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

