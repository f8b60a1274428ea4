// Nothing a request sends can end the daemon (issue 12, item 1). The daemon runs as its own process, so a
// crash shows as an exit. A deployed app first (the crash needed one), then every malformed value to every
// field of every write endpoint; then the daemon is restarted on a database holding a deploy of `../web`,
// the deploy that used to kill each new daemon.
import Database from 'better-sqlite3';
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { freePort } from '../support/caddy.js';
import { startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { ensureTestImages, WEB_V1 } from '../support/images.js';
import { waitFor } from '../support/wait.js';

const runtime = createDockerRuntime({ log: silentLogger });
const FINAL = ['success', 'failed', 'auto_rollback', 'cancelled'];
let d: DaemonProcess;
let appId: number;
let appPort: number;

/** What a careless or hostile client sends: the references, paths, control characters, wrong types. */
const MALFORMED: unknown[] = [
  '-x', '../x', '../web', 'UPPER:v1', 'wéb', '網站', 'a\u0000b', '\u0000', '', ' ', 'a b', '$(reboot)', '`id`', 'a;b',
  '../../etc/passwd', '%2e%2e%2fx', 'http://169.254.169.254/', 'x'.repeat(70_000), -1, 0, 1.5, 1e308, 65536, true, null, [], {}, { $ne: 1 },
];

/** Write endpoints, a valid body, and the fields whose value is free text (any string may be stored). */
interface Endpoint {
  method: string;
  path: () => string;
  base: Record<string, unknown>;
  fields: string[];
  /** Fields where any string is a legal value, so a 2xx is a correct answer. */
  freeText?: string[];
  /** Fields where null is legal (it clears them). */
  nullable?: string[];
  /** Boolean fields (true is legal). */
  flags?: string[];
}

const endpoints = (freePort: number): Endpoint[] => [
  {
    method: 'POST', path: () => '/api/apps',
    base: { name: 'rb-fuzz', fallback_port: freePort, image_ref: WEB_V1 },
    fields: ['name', 'app_type', 'build_mode', 'project_type', 'source', 'repo_url', 'branch', 'internal_port', 'image_ref', 'domain', 'fallback_port', 'access_mode', 'health_check_path'],
    freeText: ['source', 'repo_url', 'branch'],
    nullable: ['source', 'repo_url', 'image_ref', 'domain'],
  },
  {
    method: 'PUT', path: () => `/api/apps/${appId}`, base: {},
    fields: ['name', 'app_type', 'build_mode', 'project_type', 'source', 'repo_url', 'branch', 'internal_port', 'image_ref', 'domain', 'fallback_port', 'access_mode', 'health_check_path'],
    freeText: ['source', 'repo_url', 'branch'],
    nullable: ['source', 'repo_url', 'image_ref', 'domain'],
  },
  { method: 'POST', path: () => `/api/apps/${appId}/deploys`, base: {}, fields: ['image_ref', 'commit_sha'] },
  { method: 'POST', path: () => `/api/apps/${appId}/env`, base: { key: 'RB_FUZZ', value: 'v' }, fields: ['key', 'value', 'is_secret', 'required'], freeText: ['value'], flags: ['is_secret', 'required'] },
  { method: 'POST', path: () => '/api/services', base: { name: 'rb-fuzz-db', type: 'postgres' }, fields: ['name', 'type'] },
  { method: 'POST', path: () => `/api/apps/${appId}/services`, base: { service_id: 999_999 }, fields: ['service_id', 'alias'] },
  { method: 'POST', path: () => '/api/tokens', base: { name: 'rb-fuzz' }, fields: ['name'], freeText: ['name'] },
  { method: 'POST', path: () => '/api/auth/login', base: { username: 'admin', password: 'wrong password' }, fields: ['username', 'password'] },
];

/** Paths whose parameters come from the client. */
const PATH_VALUES = ['..%2Fweb', '-1', '0', '1e3', 'w%C3%A9b', '%00', 'x'.repeat(300), '9'.repeat(30)];
const pathTemplates = (v: string): [string, string][] => [
  ['GET', `/api/apps/${v}`], ['PUT', `/api/apps/${v}`], ['DELETE', `/api/apps/${v}`], ['POST', `/api/apps/${v}/deploys`],
  ['GET', `/api/deploys/${v}`], ['GET', `/api/deploys/${v}/events`], ['DELETE', `/api/apps/${appId}/env/${v}`],
  ['GET', `/api/apps/${appId}/env/${v}/history`], ['POST', `/api/services/${v}/stop`], ['DELETE', `/api/services/${v}`],
  ['DELETE', `/api/apps/${appId}/services/${v}`], ['DELETE', `/api/tokens/${v}`], ['GET', `/api/apps/${v}/logs/stream?tail=${v}`],
];

const WEBHOOK_SECRET = 'rb-webhook-secret';

/** A tar entry header block for `path`, for hand-made hostile archives. */
const tarEntry = (path: string, type: 'File' | 'SymbolicLink' | 'CharacterDevice' = 'File', linkpath?: string) => {
  const h = new Header({ path, type, size: 0, mode: 0o644, mtime: new Date(0), linkpath });
  h.encode();
  return h.block!;
};

const show = (v: unknown) => (typeof v === 'string' && v.length > 40 ? `${v.slice(0, 20)}...(${v.length})` : JSON.stringify(v));

async function deployAndWait(body: Record<string, unknown>) {
  const res = await d.api('POST', `/api/apps/${appId}/deploys`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitFor(
    async () => {
      const dep = (await d.api('GET', `/api/deploys/${res.body.id}`)).body;
      return FINAL.includes(dep.status) ? dep : undefined;
    },
    { timeoutMs: 60_000, what: `deploy ${res.body.id} to finish` },
  );
}

beforeAll(async () => {
  await ensureTestImages(runtime);
  d = await startDaemonProcess('robust', { SVC_CODEHOST_WEBHOOK_SECRET: WEBHOOK_SECRET });
  appPort = await freePort();
  const created = await d.api('POST', '/api/apps', { name: 'rb-web', internal_port: 3000, access_mode: 'port', fallback_port: appPort, image_ref: WEB_V1 });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  appId = created.body.id;
  expect((await deployAndWait({})).status).toBe('success');
});
afterAll(async () => {
  await d?.close();
});

describe('a daemon no request can end', () => {
  it('answers every malformed value in every field of every write endpoint with a 4xx JSON error, and stays up', async () => {
    const accepted: string[] = [];
    for (const ep of endpoints(await freePort())) {
      for (const field of ep.fields) {
        for (const value of MALFORMED) {
          const body = { ...ep.base, [field]: value };
          const res = await d.api(ep.method, ep.path(), body);
          const what = `${ep.method} ${ep.path()} ${field}=${show(value)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
          expect(res.status, what).toBeLessThan(500);
          if (res.status >= 400) {
            expect(res.type, what).toContain('application/json');
            expect(res.body, what).toMatchObject({ error: expect.any(String), code: expect.any(String) });
          } else {
            const legal = value === null ? ep.nullable : typeof value === 'string' ? ep.freeText : typeof value === 'boolean' ? ep.flags : [];
            expect(legal ?? [], `accepted a malformed value: ${what}`).toContain(field);
            accepted.push(what);
            if (ep.path() === '/api/apps') await d.api('DELETE', `/api/apps/${res.body.id}`);
          }
        }
      }
      expect(d.alive(), `daemon exited during ${ep.method} ${ep.path()}: ${d.output().slice(-2000)}`).toBe(true);
    }
    for (const v of PATH_VALUES) {
      for (const [method, path] of pathTemplates(v)) {
        const res = await d.api(method, path, method === 'GET' || method === 'DELETE' ? undefined : { image_ref: '../web' });
        expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${method} ${path}`).toBeLessThan(500);
        expect(res.body, `${method} ${path}`).toMatchObject({ error: expect.any(String), code: expect.any(String) });
      }
    }
    // Bodies that are not what they claim to be.
    for (const raw of ['{"image_ref":', 'null', '[]', '"../web"', '\u0000', '{"image_ref":"../web","image_ref":"-x"}']) {
      const res = await d.api('POST', `/api/apps/${appId}/deploys`, raw);
      expect(res.status, raw).toBe(400);
      expect(res.body.code, raw).toBe('invalid_request');
    }
    const big = await postEarlyAnswered(`/api/apps/${appId}/env`, JSON.stringify({ key: 'RB_BIG', value: 'x'.repeat(2 * 1024 * 1024) }));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text).code).toBe('too_large');

    // Whatever was accepted has been worked on: no deploy is left running, none of a malformed image.
    await waitFor(async () => (await d.api('GET', `/api/apps/${appId}/deploys`)).body.every((x: { status: string }) => FINAL.includes(x.status)), {
      timeoutMs: 60_000,
      what: 'every deploy of rb-web to finish',
    });
    const deploys = (await d.api('GET', `/api/apps/${appId}/deploys`)).body as { image_ref: string; status: string }[];
    expect(deploys.map((x) => x.image_ref)).toEqual([WEB_V1]);
    expect(d.alive()).toBe(true);
    expect((await d.api('GET', '/healthz')).status).toBe(200);
    expect(d.output()).not.toMatch(/uncaught exception|unhandled rejection/);
    expect((await fetch(`http://127.0.0.1:${appPort}/`)).status).toBe(200);
  });

  it('manifests, archive imports and webhook deliveries with hostile content get a 4xx or an ignored answer, create nothing, and the daemon stays up', async () => {
    const appsBefore = (await d.api('GET', '/api/apps')).body.map((a: { name: string }) => a.name);
    const servicesBefore = (await d.api('GET', '/api/services')).body.length;
    // [document, legal]: null clears image_ref and domain, as through the REST API; nothing else may pass.
    const docs: [string, boolean][] = [];
    for (const value of MALFORMED) {
      const v = JSON.stringify(value);
      for (const field of ['name', 'image_ref', 'fallback_port', 'internal_port', 'access_mode', 'domain', 'health_check_path']) {
        const spec: Record<string, unknown> = { image_ref: WEB_V1, fallback_port: 39999, [field]: value };
        const legal = value === null && (field === 'image_ref' || field === 'domain');
        docs.push([`apiVersion: svc/v1\nkind: App\nmetadata: {name: ${field === 'name' ? v : 'rb-mf'}}\nspec: ${JSON.stringify(spec)}\n`, legal]);
      }
      docs.push([`apiVersion: svc/v1\nkind: Service\nmetadata: {name: ${v}}\nspec: {type: postgres}\n`, false]);
      docs.push([`apiVersion: svc/v1\nkind: Service\nmetadata: {name: rb-mf-db}\nspec: {type: ${v}}\n`, false]);
    }
    // Not YAML, not svc's, or built to exhaust the parser (a billion laughs).
    const hostile = ['{{{', 'kind: [', '\u0000', 'apiVersion: svc/v1\nkind: Pod\nmetadata: {name: x}\n', 'a: &a [x,x,x,x,x,x,x,x,x]\n' + Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`).join('\n') + '\n'];
    for (const doc of hostile) docs.push([doc, false]);
    for (const [doc, legal] of docs) {
      const res = await d.api('POST', '/api/manifests/apply', doc, { 'content-type': 'application/yaml' });
      const what = `apply ${JSON.stringify(doc).slice(0, 160)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect(res.status, what).toBeLessThan(500);
      expect(res.type, what).toContain('application/json');
      if (res.status < 400 && !legal) expect(res.body.errors.length, what).toBeGreaterThan(0);
      const made = (await d.api('GET', '/api/apps')).body.find((x: { name: string }) => x.name === 'rb-mf');
      if (made) expect((await d.api('DELETE', `/api/apps/${made.id}`)).status, what).toBe(204);
    }
    for (const value of MALFORMED) {
      const res = await d.api('POST', '/api/manifests/apply', { content: value });
      expect(res.status, `apply {content: ${show(value)}}`).toBeLessThan(500);
    }
    expect(d.alive(), d.output().slice(-2000)).toBe(true);

    // Archives that are not svc's, or try to write outside the staging directory.
    const tarOf = (...blocks: Buffer[]) => gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
    const archives = [
      Buffer.alloc(0), Buffer.from('garbage, not gzip'), gzipSync(Buffer.from('not a tar')), tarOf(),
      tarOf(tarEntry('../evil')), tarOf(tarEntry('/etc/evil')), tarOf(tarEntry('services/x', 'SymbolicLink', '/etc')),
      tarOf(tarEntry('services/dev', 'CharacterDevice')), gzipSync(Buffer.alloc(1024)).subarray(0, 20),
    ];
    for (const [i, body] of archives.entries()) {
      const res = await fetch(`${d.url}/api/backups/import`, { method: 'POST', headers: { authorization: `Bearer ${d.token()}`, 'content-type': 'application/gzip' }, body });
      const text = await res.text();
      expect(res.status, `archive ${i}: ${text}`).toBe(400);
      expect(JSON.parse(text).code, `archive ${i}`).toMatch(/invalid/);
    }
    expect((await d.api('GET', '/api/backups')).body).toEqual([]);

    // Signed deliveries with broken or hostile payloads; unsigned ones.
    const payloads: string[] = ['{', 'null', '[]', '"x"', '\u0000', 'payload=%7B', JSON.stringify({ zen: 'ping' })];
    for (const value of MALFORMED) {
      payloads.push(JSON.stringify({ ref: value, after: value, repository: { full_name: value, clone_url: value } }));
      payloads.push(JSON.stringify({ action: 'completed', workflow_run: { head_sha: value, head_branch: value, conclusion: 'success', name: value, event: 'push', head_repository: { full_name: value } }, repository: { full_name: value } }));
    }
    for (const body of payloads) {
      for (const event of ['push', 'workflow_run', 'installation', 'ping', 'issues']) {
        const signature = 'sha256=' + createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex');
        const type = body.startsWith('payload=') ? 'application/x-www-form-urlencoded' : 'application/json';
        const res = await fetch(`${d.url}/api/webhooks/codehost`, { method: 'POST', headers: { 'content-type': type, 'x-github-event': event, 'x-hub-signature-256': signature }, body });
        const what = `${event} ${body.slice(0, 120)} -> ${res.status}`;
        expect(res.status, what).toBeLessThan(500);
        expect(res.headers.get('content-type'), what).toContain('application/json');
        await res.arrayBuffer();
      }
    }
    const unsigned = await fetch(`${d.url}/api/webhooks/github`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-event': 'push' }, body: '{}' });
    expect(unsigned.status).toBe(401);

    expect((await d.api('GET', '/api/apps')).body.map((a: { name: string }) => a.name)).toEqual(appsBefore);
    expect((await d.api('GET', '/api/services')).body).toHaveLength(servicesBefore);
    expect(d.alive()).toBe(true);
    expect(d.output()).not.toMatch(/uncaught exception|unhandled rejection/);
  });

  it('streams cut off by their clients leave the daemon serving', async () => {
    const deployId = (await d.api('GET', `/api/apps/${appId}/deploys`)).body[0].id;
    for (const path of [`/api/apps/${appId}/logs/stream?tail=5`, `/api/deploys/${deployId}/events/stream`]) {
      for (let i = 0; i < 5; i++) {
        const abort = new AbortController();
        const res = await fetch(d.url + path, { headers: { authorization: `Bearer ${d.token()}` }, signal: abort.signal });
        expect(res.status, path).toBe(200);
        await res.body!.getReader().read();
        abort.abort();
      }
    }
    expect((await d.api('GET', '/healthz')).status).toBe(200);
    expect(d.alive()).toBe(true);
  });

  it('a daemon restarted on a database holding a deploy of ../web ends that deploy failed and keeps serving the app', async () => {
    await d.stop();
    const db = new Database(join(d.dataDir, 'svc.db'));
    try {
      // As a daemon without validation left it: the app's image and a deploy at its pull step.
      db.prepare('update apps set image_ref = ? where id = ?').run('../web', appId);
      db.prepare(
        `insert into deploys (app_id, image_ref, trigger, status, step, started_at, created_at) values (?, '../web', 'manual', 'running', 'pull', ?, ?)`,
      ).run(appId, new Date().toISOString(), new Date().toISOString());
    } finally {
      db.close();
    }
    await d.start();
    const failed = await waitFor(
      async () => {
        const list = (await d.api('GET', `/api/apps/${appId}/deploys`)).body as { image_ref: string; status: string; error: string }[];
        const bad = list.find((x) => x.image_ref === '../web');
        return bad && FINAL.includes(bad.status) ? bad : undefined;
      },
      { timeoutMs: 30_000, what: 'the ../web deploy to end' },
    );
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/invalid image reference "\.\.\/web"/);
    expect(d.alive()).toBe(true);
    expect((await fetch(`http://127.0.0.1:${appPort}/`)).status).toBe(200);
    const live = await runtime.list({ [LABELS.instance]: d.instance()!, [LABELS.app]: 'rb-web' });
    expect(live.filter((c) => c.running)).toHaveLength(1);
    // A new deploy without an image_ref refuses the stored one instead of queueing another doomed deploy.
    const again = await d.api('POST', `/api/apps/${appId}/deploys`, {});
    expect(again.status).toBe(400);
    expect(d.output()).not.toMatch(/uncaught exception|unhandled rejection/);
  });
});

/**
 * POSTs a body the daemon refuses before reading it (413): the answer comes while the body is still being
 * sent and the daemon then closes the connection, which fetch reports as a failure; node:http shows the answer.
 */
function postEarlyAnswered(path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(d.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${d.token()}` },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', (err) => setTimeout(() => reject(err), 1000).unref()); // the answer may still be on its way
    req.end(body);
  });
}
