// A whole svc daemon for integration tests: real Docker engine, real host Caddy (external proxy mode),
// the real DNS responder, a temp data dir, its own network and instance label. `close()` stops the
// daemon and removes every container, the network, the responder process, Caddy and the temp dir.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config.js';
import { silentLogger, createLogger } from '../../src/log.js';
import { startDaemon, type Daemon } from '../../src/main.js';
import type { ComposeLoader } from '../../src/desired/stacks.js';
import { createDockerRuntime } from '../../src/runtime/docker.js';
import { LABELS } from '../../src/runtime/runtime.js';
import { stopHelpersOf } from '../../src/proxy/detached.js';
import { caddyBin, freePort, startCaddy, type TestCaddy } from './caddy.js';
import { waitFor } from './wait.js';
import { openApiChecker } from './openapi-check.js';

/**
 * Every answer `api()` gets is checked against the OpenAPI document (issue 34), read once per test file from
 * the first daemon that answers (the document is the same for every one): an undeclared status or a JSON
 * body off its schema fails the request that received it, with the route and the schema's complaint.
 */
let documentUrl: string | undefined;
const checkAnswer = openApiChecker(async () => (await fetch(`${documentUrl}/api/openapi.json`)).json());


export interface TestDaemon {
  daemon: Daemon;
  caddy: TestCaddy;
  dataDir: string;
  instance: string;
  network: string;
  url: string;
  httpsPort: number;
  token: string;
  /** JSON request with the bearer token; returns status and parsed body. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /**
   * Restarts the daemon process part only (same data dir, Caddy and responder keep running). `whileStopped`
   * runs between the stop and the start: what an operator does to the engine while no svc watches.
   */
  restart(whileStopped?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** `setup: false` leaves the install empty (no user, no token: `api()` is then unauthenticated), for the setup wizard. */
/** `now`: the jobs scheduler's clock (startDaemon's option), kept across `restart()`. */
/** `dataDir`: an empty directory the caller made (removed by `close()` as its own would be). */
/** `loadCompose`: the Compose loader the daemon's stack endpoints use (a stand-in until the real one is merged). */
export async function startTestDaemon(name: string, env: Record<string, string> = {}, opts: { setup?: boolean; now?: () => number; dataDir?: string; loadCompose?: ComposeLoader } = {}): Promise<TestDaemon> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), `svc-test-${name}-`)));
  const instance = `test-${name}-${process.pid}`;
  const network = `svc-test-${name}-${process.pid}`;
  const caddy = await startCaddy();
  const vars = { ...(await isolatedDaemonEnv({ dataDir, caddyAdminUrl: caddy.adminUrl, network, instance })), ...env };
  const config = parseConfig(vars, join(dataDir, '.env'));
  const log = process.env.SVC_TEST_LOG ? createLogger('debug') : silentLogger;
  let daemon = await startDaemon(config, log, { now: opts.now, loadCompose: opts.loadCompose });
  const url = daemon.url;
  const send = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
    fetch(url + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const raw = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    // After restart() the client's pool may still hold a keep-alive socket the stopped server closed; a
    // request written on it fails with UND_ERR_SOCKET before any server read it, so one retry is safe.
    const res = await send(method, path, body, headers).catch((err: Error & { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'UND_ERR_SOCKET') throw err;
      return send(method, path, body, headers);
    });
    const text = await res.text();
    return { status: res.status, body: text ? safeJson(text) : undefined, headers: res.headers };
  };
  let token = '';
  if (opts.setup !== false) {
    const setup = await raw('POST', '/api/auth/setup', { username: 'admin', password: 'correct horse battery' });
    const cookie = setup.headers.get('set-cookie')?.split(';')[0] ?? '';
    const tok = await raw('POST', '/api/tokens', { name: 'tests' }, { cookie });
    if (tok.status !== 201) throw new Error(`token creation failed: ${tok.status} ${JSON.stringify(tok.body)}`);
    token = (tok.body as { token: string }).token;
  }

  const td: TestDaemon = {
    get daemon() {
      return daemon;
    },
    caddy,
    dataDir,
    instance,
    network,
    url,
    httpsPort: config.proxy.httpsPort,
    token,
    api: async (method, path, body) => {
      const r = await raw(method, path, body, { authorization: `Bearer ${token}` });
      documentUrl ??= url;
      const type = r.headers.get('content-type');
      await checkAnswer(method, path, r.status, type, type?.includes('json') && r.body !== undefined ? r.body : null);
      return { status: r.status, body: r.body as any };
    },
    async restart(whileStopped) {
      await daemon.stop();
      await whileStopped?.();
      daemon = await startDaemon(config, log, { now: opts.now, loadCompose: opts.loadCompose });
    },
    async close() {
      await daemon.stop().catch(() => {});
      // Every step runs even when the containers' removal fails; that failure is reported last.
      const notRemoved = await removeInstance(instance, network).then(() => undefined, (err: unknown) => err);
      await stopHelpersOf(dataDir).catch(() => {});
      await caddy.stop().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
      if (notRemoved) throw notRemoved;
    },
  };
  return td;
}

/**
 * The settings of a daemon that shares this machine with others: its own data dir, free loopback ports,
 * an external Caddy, its own Docker network and instance label.
 */
export async function isolatedDaemonEnv(o: { dataDir: string; caddyAdminUrl: string; network: string; instance: string }): Promise<Record<string, string>> {
  return {
    SVC_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
    SVC_DATA_DIR: o.dataDir,
    SVC_MANIFESTS_DIR: join(o.dataDir, 'manifests'),
    SVC_PORT: String(await freePort()),
    SVC_HOST: '127.0.0.1',
    SVC_PROXY_MODE: 'external',
    SVC_PROXY_ADMIN_URL: o.caddyAdminUrl,
    // The tests' Caddy (test/support/caddy.ts) for a test that switches to host mode.
    SVC_PROXY_BIN: caddyBin(),
    SVC_HTTP_PORT: String(await freePort()),
    SVC_HTTPS_PORT: String(await freePort()),
    SVC_TLS_ISSUER: 'internal',
    SVC_DNS_PORT: String(await freePort()),
    SVC_NETWORK: o.network,
    SVC_INSTANCE: o.instance,
    SVC_LOG_LEVEL: process.env.SVC_TEST_LOG ? 'debug' : 'error',
    // Off unless a test turns it on: tests of deploys expect the old container gone once a deploy ends.
    SVC_DEPLOY_WATCH_SECONDS: '0',
  };
}

/** Removes every container of a test instance and its network. */
/**
 * Removes every container of `instance`, then its network. Each container is removed on its own and retried
 * until the engine no longer lists it (bounded): a removal the engine has in progress, or one it failed
 * ("directory not empty" after a `docker rm -f` raced it), must neither leave the other containers behind
 * nor pass silently. What is still there at the end is thrown, naming it.
 */
export async function removeInstance(instance: string, network: string) {
  const runtime = createDockerRuntime({ log: silentLogger });
  const left: string[] = [];
  for (const c of await runtime.list({ [LABELS.instance]: instance })) {
    const gone = async () => {
      await runtime.remove(c.id);
      // The list, not inspect: a container the engine failed to remove is listed ("removing") but not inspectable.
      return !(await runtime.list({ [LABELS.instance]: instance })).some((x) => x.id === c.id);
    };
    await waitFor(gone, { timeoutMs: 15_000, intervalMs: 200, what: `container ${c.name} removed` }).catch((err: Error) => left.push(err.message));
  }
  await runtime.docker.getNetwork(network).remove().catch(() => {});
  if (left.length > 0) throw new Error(`containers of ${instance} left on the engine: ${left.join('; ')}`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Asks for a deploy of `image` through the API (202) and answers its id. */
export async function requestImageDeploy(t: Pick<TestDaemon, 'api'>, appId: number, image: string): Promise<number> {
  const res = await t.api('POST', `/api/apps/${appId}/deploys`, { image_ref: image });
  if (res.status !== 202) throw new Error(`deploy of ${image} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.id as number;
}

/** Waits until deploy `id` satisfies `pred` (read through the API) and answers it. */
export const deployReaching = (t: Pick<TestDaemon, 'api'>, id: number, pred: (d: any) => boolean, what: string, timeoutMs = 45_000) =>
  waitFor(async () => {
    const d = (await t.api('GET', `/api/deploys/${id}`)).body;
    return pred(d) ? d : undefined;
  }, { timeoutMs, what: `deploy ${id} ${what}` });
