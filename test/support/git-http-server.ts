// A local code host serving git over smart HTTP (git's own `git http-backend` as a CGI program, started
// through an argument array) that answers 401 unless a request carries `Authorization: Basic <user:token>`.
// It records the user name and whether each request was authorized, so a test can prove a clone sent the
// token as a header (and never in the URL). Loopback only.
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`; a repository is `<url>/<path under root>`. */
  url: string;
  requests: { path: string; user: string | null; authorized: boolean; urlHadCredentials: boolean }[];
  close(): Promise<void>;
}

/** git-http-backend ships with git (Debian's `git` package), in git's exec path. */
const BACKEND = `${execFileSync('git', ['--exec-path']).toString().trim()}/git-http-backend`;

export async function startGitHttpServer(root: string, want: { user: string; token: string }): Promise<GitHttpServer> {
  const requests: GitHttpServer['requests'] = [];
  const expected = `Basic ${Buffer.from(`${want.user}:${want.token}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const auth = req.headers.authorization ?? null;
    const user = auth?.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString().split(':')[0] : null;
    const authorized = auth === expected;
    requests.push({ path: url.pathname, user, authorized, urlHadCredentials: (req.url ?? '').includes('@') });
    if (!authorized) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('authentication required\n');
      return;
    }
    const cgi = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: user ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const [k, v] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => {
      if (!headersDone) res.writeHead(500).end('git http-backend failed\n');
      else res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
