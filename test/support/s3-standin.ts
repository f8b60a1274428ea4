// The svc-test Garage stand-in (test/support/images/garage-standin/garage.cjs) run as a host process on
// loopback, for off-host backup tests: no image to build, a store that a test can kill mid-upload and
// start again on the same data, and whose object files a test can corrupt on disk. One bucket and one
// read/write key are made through its admin API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait.js';

const SCRIPT = join(import.meta.dirname, 'images/garage-standin/garage.cjs');

export interface S3Standin {
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  dataDir: string;
  /** SIGKILLs the store (the "store went away" fault); `start()` brings it back on the same data. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** The next whole-object GET answers one byte flipped (a store that corrupted the copy). */
  corruptNextGet(): Promise<void>;
  /** The next PutObject / UploadPart is stored with one byte flipped after the store's checksum check. */
  corruptNextWrite(): Promise<void>;
  /** Every UploadPart is refused (400 InvalidRequest) while on: a store that refuses a part mid-upload. */
  refuseParts(on: boolean): Promise<void>;
  /** Object files (data_dir/<bucketId>/<sha256(key)>) and unfinished multipart uploads, for assertions. */
  objectFiles(): string[];
  pendingUploads(): string[];
  stop(): Promise<void>;
  /** The store process's CPU time so far in ms (user + system, /proc), for benchmarks. */
  cpuMs(): number;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `checksums`: report S3 additional checksums (SHA-256) as AWS S3 and MinIO do; off, it is Garage v1 (none). */
export async function startS3Standin(bucket = 'svc-offsite', opts: { checksums?: boolean } = {}): Promise<S3Standin> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s3-'));
  const [s3Port, adminPort] = [await freePort(), await freePort()];
  const token = 'standin-admin-token';
  const config = join(dir, 'garage.toml');
  writeFileSync(
    config,
    [
      `metadata_dir = "${dir}/meta"`,
      `data_dir = "${dir}/data"`,
      '[s3_api]',
      's3_region = "garage"',
      `checksums = ${opts.checksums === true}`,
      `api_bind_addr = "127.0.0.1:${s3Port}"`,
      '[admin]',
      `api_bind_addr = "127.0.0.1:${adminPort}"`,
      `admin_token = "${token}"`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  const endpoint = `http://127.0.0.1:${s3Port}`;
  const start = async () => {
    child = spawn(process.execPath, [SCRIPT, '-c', config, 'server'], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.resume();
    await waitFor(async () => (await fetch(`${endpoint}/health`).then((r) => r.ok).catch(() => false)) || undefined, { timeoutMs: 10_000 });
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await start();
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`http://127.0.0.1:${adminPort}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`stand-in admin ${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const key = await admin<{ accessKeyId: string; secretAccessKey: string }>('POST', '/v1/key', { name: 'offsite' });
  const b = await admin<{ id: string }>('POST', '/v1/bucket', { globalAlias: bucket });
  await admin('POST', '/v1/bucket/allow', { bucketId: b.id, accessKeyId: key.accessKeyId, permissions: { read: true, write: true, owner: true } });
  const walk = (root: string): string[] => {
    let out: string[] = [];
    let names: string[] = [];
    try {
      names = readdirSync(root);
    } catch {
      return [];
    }
    for (const n of names) {
      const p = join(root, n);
      if (statSync(p).isDirectory()) out = out.concat(walk(p));
      else out.push(p);
    }
    return out;
  };
  return {
    endpoint,
    region: 'garage',
    bucket,
    accessKey: key.accessKeyId,
    secretKey: key.secretAccessKey,
    dataDir: join(dir, 'data'),
    kill,
    start,
    corruptNextGet: async () => {
      await admin('POST', '/v1/svc-test/faults', { corruptNextGet: true });
    },
    corruptNextWrite: async () => {
      await admin('POST', '/v1/svc-test/faults', { corruptNextWrite: true });
    },
    refuseParts: async (on: boolean) => {
      await admin('POST', '/v1/svc-test/faults', { refuseParts: on });
    },
    objectFiles: () => walk(join(dir, 'data', b.id)).filter((f) => !f.includes('.tmp-')),
    pendingUploads: () => walk(join(dir, 'data', '.multipart')).filter((f) => f.endsWith('upload.json')),
    cpuMs() {
      if (!child?.pid) return 0;
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
      return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ 100)
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
