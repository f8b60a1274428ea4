// A test harness for the REST API and the UI: the real hono app (src/server.ts) on a `:memory:` database with the real migrations,
// a recording enqueue, a captured log and a clock the test moves. `login()` seeds a user and a session
// directly (no scrypt on every test), after which `request()` sends that session cookie by default.
import { rmSync } from 'node:fs';
import { afterAll, afterEach } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '../../src/server.js';
import { hashPassword } from '../../src/auth/password.js';
import { parseConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { Bus } from '../../src/controller/bus.js';
import type { BackupControl } from '../../src/backup/control.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import type { Key } from '../../src/controller/types.js';
import type { Db } from '../../src/store/db.js';
import type { ComposeLoader } from '../../src/desired/stacks.js';
import { users, type Role } from '../../src/store/schema/index.js';
import { createSession } from '../../src/store/sessions.js';
import { userJson, type PublicUser } from '../../src/store/users.js';
import { memoryDb, recordingEnqueue, testKey, testSealer } from './db.js';
import { openApiChecker } from './openapi-check.js';

/**
 * The OpenAPI document, fetched once per test file from the first API made (it is the same for every one):
 * every answer `request()` gets is checked against it (test/support/openapi-check.ts).
 */
let documentOf: (() => Promise<any>) | undefined;
const checkAnswer = openApiChecker(() => documentOf!());
/**
 * Answers seen during the current test, checked after it (the document is built once, on first use: a test
 * that times its own requests does not pay for it). A mismatch fails the test that received the answer.
 */
const answers: { method: string; path: string; status: number; type: string | null; text: string }[] = [];
// Outside vitest (bench/ui.ts seeds its pages through this harness) there is no test to hook onto.
if (process.env.VITEST) afterEach(async () => {
  for (const a of answers.splice(0)) {
    await checkAnswer(a.method, a.path, a.status, a.type, a.text !== '' && a.type?.includes('json') ? JSON.parse(a.text) : null);
  }
});

export interface RequestOpts {
  /** Extra or overriding headers. */
  headers?: Record<string, string>;
  /** Sent as is instead of JSON.stringify(body). */
  raw?: string;
  /** 'none': no credentials even after login(); a string: this session cookie token; default: login()'s. */
  cookie?: string | 'none';
  /** Authorization: Bearer <token> instead of the cookie. */
  token?: string;
  /** Content-Type; default application/json. null sends none. */
  contentType?: string | null;
}

export interface TestResponse {
  status: number;
  /** Parsed JSON (any: tests index into it freely), the text for other types, null when empty. */
  body: any;
  headers: Headers;
}

/** A cheap hash for seeded users (the production cost is exercised by the auth tests). */
let seededHash: Promise<string> | undefined;
export const SEEDED_PASSWORD = 'correct horse battery';

/** The data dir of every test API of this worker (service data dirs land there); removed after each test file. */
const dataDir = join(tmpdir(), `svc-api-test-${process.pid}`);
if (process.env.VITEST) afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `runtime` and `bus` are passed to the API as is (log streams, live deploy events); both optional. */
/** `envFile`: the `.env` the daemon would write (manifest flow); default one in the temp data dir. */
/** `backups`: the backup reconcilers' progress signal, for requests that wait for them (the test plays the reconciler). */
/** `onEnqueue`: sees every key the API enqueues (a test that plays a reconciler runs it from there). */
export function createTestApi(opts: { env?: Record<string, string>; runtime?: Runtime; bus?: Bus; envFile?: string; backups?: BackupControl; onEnqueue?: (key: Key) => void; loadCompose?: ComposeLoader } = {}) {
  const db: Db = memoryDb();
  const recorded = recordingEnqueue();
  const enqueue = Object.assign((key: Key) => {
    recorded(key);
    opts.onEnqueue?.(key);
  }, { keys: recorded.keys });
  const sealer = testSealer();
  const logs: string[] = [];
  const config: Config = parseConfig({
    SVC_ENCRYPTION_KEY: testKey.toString('base64'),
    SVC_DATA_DIR: dataDir,
    ...opts.env,
  }, opts.envFile ?? join(dataDir, '.env'));
  let nowMs = Date.parse('2026-01-01T00:00:00Z');
  const clock = { now: () => new Date(nowMs), advance: (ms: number) => void (nowMs += ms) };
  const log = createLogger('debug', {}, (l) => logs.push(l));
  const app = createServer({ db, sealer, config, log, enqueue, now: clock.now, runtime: opts.runtime, bus: opts.bus ?? new Bus(), backups: opts.backups, loadCompose: opts.loadCompose });
  let session: string | undefined;
  documentOf ??= async () => (await app.request('/api/openapi.json')).json();

  async function request(method: string, path: string, body?: unknown, o: RequestOpts = {}): Promise<TestResponse> {
    const headers: Record<string, string> = {};
    const type = o.contentType === undefined ? 'application/json' : o.contentType;
    if (type !== null) headers['content-type'] = type;
    const cookie = o.cookie === 'none' ? undefined : (o.cookie ?? session);
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    else if (cookie) headers.cookie = `session=${cookie}`;
    Object.assign(headers, o.headers);
    const payload = o.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const res = await app.request(path, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    if (text !== '' && res.headers.get('content-type')?.includes('json')) parsed = JSON.parse(text);
    answers.push({ method, path, status: res.status, type: res.headers.get('content-type'), text });
    return { status: res.status, body: text === '' ? null : parsed, headers: res.headers };
  }

  /** Seeds a user (password SEEDED_PASSWORD, an owner unless `role` says otherwise) and a session that `request()` then uses by default. */
  async function login(username = 'admin', role: Role = 'owner', apps: string[] | null = null): Promise<{ user: PublicUser; cookie: string }> {
    seededHash ??= hashPassword(SEEDED_PASSWORD, { ln: 10, r: 8, p: 1 });
    const row = db.insert(users).values({ username, passwordHash: await seededHash, role, apps }).returning().get();
    session = createSession(db, row.id, clock.now());
    return { user: userJson(row), cookie: session };
  }

  return { app, db, enqueue, sealer, config, logs, clock, request, login };
}

export type TestApi = ReturnType<typeof createTestApi>;
