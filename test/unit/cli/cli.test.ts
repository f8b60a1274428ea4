import { describe, it, expect } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatPlan, readPath } from '../../../src/cli/apply.js';
import { formatTable } from '../../../src/cli/apps.js';
import { CliError, clientSettings, createClient, type Client } from '../../../src/cli/client.js';
import { restoreCommand } from '../../../src/cli/backup.js';
import { readSse } from '../../../src/cli/sse.js';

const stream = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch));
      c.close();
    },
  });

describe('the CLI pieces', () => {
  it('svc restore ID asks the daemon for the restore and prints each phase until it has settled', async () => {
    const phases = ['unpacking', 'unpacking', 'safety_backup', 'swapping', 'completed'];
    const calls: string[] = [];
    const client: Client = {
      url: 'http://x',
      raw: async () => new Response(),
      async json(method: string, path: string) {
        calls.push(`${method} ${path}`);
        const phase = method === 'POST' ? 'pending' : phases.shift()!;
        return { id: 7, backup_id: 3, phase, safety_backup_id: phase === 'completed' ? 9 : null, error: null } as never;
      },
    };
    const lines: string[] = [];
    expect(await restoreCommand(client, { file: '3', pollMs: 1, write: (t) => lines.push(t) })).toBe(0);
    expect(calls[0]).toBe('POST /api/backups/3/restore?wait=false');
    expect(calls.slice(1).every((c) => c === 'GET /api/restores/7')).toBe(true);
    expect(lines.join('')).toBe(
      'restore 7 of backup 3: pending\nrestore 7: unpacking\nrestore 7: safety_backup\nrestore 7: swapping\nrestore 7: completed\nrestore 7 completed; safety backup 9\n',
    );
    const failing: Client = { ...client, json: async (m: string) => ({ id: 8, backup_id: 3, phase: m === 'POST' ? 'pending' : 'failed', error: 'restore failed and was rolled back: disk full' }) as never };
    await expect(restoreCommand(failing, { file: '3', pollMs: 1, write: () => {} })).rejects.toThrow('restore 8 failed: restore failed and was rolled back: disk full');
  });

  it('reads SSE events split across chunks, skipping comments', async () => {
    const out = [];
    for await (const e of readSse(stream(['event: deploy_event\nid: 3\nda', 'ta: {"a":1}\n\n: keepalive\n\n', 'event: done\r\ndata: {"status":"success"}\r\n\r\n']))) out.push(e);
    expect(out).toEqual([{ event: 'deploy_event', id: '3', data: '{"a":1}' }, { event: 'done', data: '{"status":"success"}', id: undefined }]);
  });

  it('SVC_URL defaults to 127.0.0.1:$SVC_PORT; both may come from .env', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    try {
      writeFileSync(join(dir, '.env'), 'SVC_PORT=4100\nSVC_TOKEN=fromfile\n');
      expect(clientSettings({}, join(dir, '.env'))).toEqual({ url: 'http://127.0.0.1:4100', token: 'fromfile' });
      expect(clientSettings({ SVC_URL: 'https://svc.example/', SVC_TOKEN: 't' }, join(dir, '.env'))).toEqual({ url: 'https://svc.example', token: 't' });
      expect(clientSettings({}, join(dir, 'none'))).toEqual({ url: 'http://127.0.0.1:3000', token: undefined });
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it("turns an API error into its sentence, an unreachable daemon into one line", async () => {
    const fake = (async () => new Response(JSON.stringify({ error: 'app not found', code: 'not_found' }), { status: 404 })) as typeof fetch;
    await expect(createClient({ url: 'http://x', token: 't' }, fake).json('GET', '/api/apps/9')).rejects.toThrow(new CliError('app not found', 1, 'not_found', 404));
    const down = (async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    }) as typeof fetch;
    await expect(createClient({ url: 'http://x', token: 't' }, down).json('GET', '/')).rejects.toThrow('cannot reach svc at http://x: ECONNREFUSED');
    const unauth = (async () => new Response(JSON.stringify({ error: 'log in first' }), { status: 401 })) as typeof fetch;
    await expect(createClient({ url: 'http://x', token: undefined }, unauth).json('GET', '/')).rejects.toThrow(/set SVC_TOKEN/);
  });

  it('sends the bearer token, and X-Svc-Origin: cli so the daemon records the CLI as the origin', async () => {
    let auth: string | null = null;
    let origin: string | null = null;
    const fake = (async (_u: string, init: RequestInit) => {
      auth = new Headers(init.headers).get('authorization');
      origin = new Headers(init.headers).get('x-svc-origin');
      return new Response('[]');
    }) as unknown as typeof fetch;
    await createClient({ url: 'http://x', token: 'tok' }, fake).json('GET', '/api/apps');
    expect(auth).toBe('Bearer tok');
    expect(origin).toBe('cli');
  });

  it('reads a file or a directory of manifests, named relative to it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    try {
      mkdirSync(join(dir, 'sub'));
      writeFileSync(join(dir, 'a.yaml'), 'a');
      writeFileSync(join(dir, 'sub', 'b.yml'), 'b');
      writeFileSync(join(dir, 'README.md'), 'no');
      expect(readPath(dir)).toEqual([{ name: 'a.yaml', content: 'a' }, { name: 'sub/b.yml', content: 'b' }]);
      expect(readPath(join(dir, 'a.yaml'))).toEqual([{ name: 'a.yaml', content: 'a' }]);
      expect(() => readPath(join(dir, 'nope'))).toThrow(/no such file/);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('prints the plan: changes in full, unchanged counted, errors with file, document and path', () => {
    const text = formatPlan({
      source: 'api', revision: 'r', dry_run: true,
      resources: [
        { kind: 'Service', name: 'db', action: 'create', changes: [] },
        { kind: 'App', name: 'web', action: 'update', changes: ['image_ref', 'env.A'] },
        { kind: 'App', name: 'old', action: 'delete', changes: [] },
        { kind: 'App', name: 'same', action: 'unchanged', changes: [] },
      ],
      errors: [{ file: 'x.yaml', document: 1, path: 'spec.internal_port', message: 'too big' }],
    });
    expect(text).toBe(
      '+ Service/db create\n~ App/web update: image_ref, env.A\n- App/old delete\n= 1 unchanged\n' +
        'error: x.yaml document 1 spec.internal_port: too big\n(dry run: nothing changed)\n',
    );
    expect(formatTable([['A', 'BB'], ['ccc', 'd']])).toBe('A    BB\nccc  d\n');
  });
});
