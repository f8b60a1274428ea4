// A local code host (node:http) implementing the GitHub endpoints svc calls: the manifest conversion,
// app installations, installation access tokens, installation repositories, repository installation.
// It verifies every app JWT it receives (RS256 with the key it issued, iss, iat/exp window) and every
// installation token, and counts calls so tests can assert caching. It also speaks GitLab's merge-request
// notes (/api/v4, PRIVATE-TOKEN) and Gitea/Forgejo's issue comments (/api/v1, `Authorization: token`),
// both accepting only `hostToken` (an app's repo_token).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface FakeCodehost {
  url: string;
  /** The one code the conversion endpoint accepts. */
  code: string;
  /** What the conversion answered (the test compares what svc stored against it). */
  app: { id: number; slug: string; client_id: string; client_secret: string; webhook_secret: string; pem: string };
  installations: { id: number; account: { login: string }; repositories: string[] }[];
  calls: { method: string; path: string; ok: boolean }[];
  /** JWT problems seen (empty when every JWT was valid). */
  jwtErrors: string[];
  /** Issue and pull-request comments posted with an installation token, each with every text it had. */
  comments: { id: number; repo: string; number: number; body: string; bodies: string[]; host?: 'gitlab' | 'gitea' }[];
  /** The one token the GitLab and Gitea endpoints accept. */
  hostToken: string;
  /** The next this many comment calls answer 500 (delivery failures). */
  failComments: number;
  close(): Promise<void>;
}

export async function startFakeCodehost(): Promise<FakeCodehost> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const fake: Omit<FakeCodehost, 'url' | 'close'> = {
    code: randomBytes(10).toString('hex'),
    app: { id: 4242, slug: 'svc-test-app', client_id: 'Iv1.0123456789abcdef', client_secret: randomBytes(20).toString('hex'), webhook_secret: randomBytes(20).toString('hex'), pem },
    installations: [{ id: 7, account: { login: 'acme' }, repositories: ['acme/site', 'acme/api'] }],
    calls: [],
    jwtErrors: [],
    comments: [],
    failComments: 0,
    hostToken: `tok-${randomBytes(12).toString('hex')}`,
  };
  let commentIds = 1000;
  const tokens = new Map<string, number>();

  const checkJwt = (req: IncomingMessage): boolean => {
    const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(req.headers.authorization ?? '');
    if (!m) return !!fake.jwtErrors.push('no bearer JWT');
    const header = JSON.parse(Buffer.from(m[1], 'base64url').toString());
    const claims = JSON.parse(Buffer.from(m[2], 'base64url').toString());
    const ok = verify('sha256', Buffer.from(`${m[1]}.${m[2]}`), publicKey, Buffer.from(m[3], 'base64url'));
    const now = Math.floor(Date.now() / 1000);
    const problems = [
      header.alg !== 'RS256' && 'alg is not RS256',
      !ok && 'bad signature',
      claims.iss !== String(fake.app.id) && claims.iss !== fake.app.id && 'wrong iss',
      !(claims.iat <= now - 30) && 'iat not in the past',
      !(claims.exp > now && claims.exp - claims.iat <= 600) && 'exp not within 10 minutes',
    ].filter(Boolean) as string[];
    fake.jwtErrors.push(...problems);
    return problems.length === 0;
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (status: number, body: unknown) => {
      fake.calls.push({ method: req.method ?? '', path, ok: status < 400 });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        route();
      } catch (err) {
        send(500, { message: String(err) });
      }
    });
    const route = () => {
      let m: RegExpExecArray | null;
      if (req.method === 'POST' && (m = /^\/app-manifests\/([^/]+)\/conversions$/.exec(path))) {
        return m[1] === fake.code ? send(201, { ...fake.app, owner: { login: 'acme' }, html_url: 'https://example/apps/svc' }) : send(404, { message: 'Not Found' });
      }
      if (req.method === 'GET' && path === '/app/installations') return checkJwt(req) ? send(200, fake.installations) : send(401, { message: 'bad JWT' });
      if (req.method === 'POST' && (m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path))) {
        if (!checkJwt(req)) return send(401, { message: 'bad JWT' });
        const inst = fake.installations.find((i) => i.id === Number(m![1]));
        if (!inst) return send(404, { message: 'Not Found' });
        const token = `ghs_${randomBytes(16).toString('hex')}`;
        tokens.set(token, inst.id);
        return send(201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString() });
      }
      if (req.method === 'GET' && path === '/installation/repositories') {
        const id = tokens.get((req.headers.authorization ?? '').replace(/^token /, ''));
        const inst = fake.installations.find((i) => i.id === id);
        if (!inst) return send(401, { message: 'bad token' });
        return send(200, { total_count: inst.repositories.length, repositories: inst.repositories.map((full_name) => ({ full_name })) });
      }
      const tokenInstallation = () => fake.installations.find((i) => i.id === tokens.get((req.headers.authorization ?? '').replace(/^token /, '')));
      const commentBody = () => {
        const doc = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        return typeof doc.body === 'string' ? doc.body : undefined;
      };
      if (req.method === 'POST' && (m = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(path))) {
        const inst = tokenInstallation();
        if (!inst || !inst.repositories.includes(m[1].toLowerCase())) return send(401, { message: 'bad token' });
        if (fake.failComments > 0 && fake.failComments--) return send(500, { message: 'injected failure' });
        const body = commentBody();
        if (body === undefined) return send(422, { message: 'body is missing' });
        const c = { id: ++commentIds, repo: m[1].toLowerCase(), number: Number(m[2]), body, bodies: [body] };
        fake.comments.push(c);
        return send(201, { id: c.id, body });
      }
      if (req.method === 'PATCH' && (m = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/.exec(path))) {
        const inst = tokenInstallation();
        if (!inst || !inst.repositories.includes(m[1].toLowerCase())) return send(401, { message: 'bad token' });
        if (fake.failComments > 0 && fake.failComments--) return send(500, { message: 'injected failure' });
        const c = fake.comments.find((x) => x.id === Number(m![2]) && x.repo === m![1].toLowerCase());
        const body = commentBody();
        if (!c) return send(404, { message: 'Not Found' });
        if (body === undefined) return send(422, { message: 'body is missing' });
        c.body = body;
        c.bodies.push(body);
        return send(200, { id: c.id, body });
      }
      // GitLab (repo_token as PRIVATE-TOKEN) and Gitea/Forgejo (`Authorization: token`): post, then edit.
      const other = (host: 'gitlab' | 'gitea', ok: boolean, repo: string, number: number | null, id: number | null) => {
        if (!ok) return send(401, { message: '401 Unauthorized' });
        if (fake.failComments > 0 && fake.failComments--) return send(500, { message: 'injected failure' });
        const body = commentBody();
        if (body === undefined) return send(400, { message: 'body is missing' });
        if (id === null) {
          const c = { id: ++commentIds, repo, number: number!, body, bodies: [body], host };
          fake.comments.push(c);
          return send(201, { id: c.id, body });
        }
        const c = fake.comments.find((x) => x.id === id && x.repo === repo && x.host === host && (number === null || x.number === number));
        if (!c) return send(404, { message: '404 Not found' });
        c.body = body;
        c.bodies.push(body);
        return send(200, { id: c.id, body });
      };
      const gitlabOk = () => req.headers['private-token'] === fake.hostToken && !req.headers.authorization;
      const giteaOk = () => req.headers.authorization === `token ${fake.hostToken}`;
      if (req.method === 'POST' && (m = /^\/api\/v4\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes$/.exec(path))) {
        return other('gitlab', gitlabOk(), decodeURIComponent(m[1]), Number(m[2]), null);
      }
      if (req.method === 'PUT' && (m = /^\/api\/v4\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes\/(\d+)$/.exec(path))) {
        return other('gitlab', gitlabOk(), decodeURIComponent(m[1]), Number(m[2]), Number(m[3]));
      }
      if (req.method === 'POST' && (m = /^\/api\/v1\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(path))) {
        return other('gitea', giteaOk(), m[1], Number(m[2]), null);
      }
      if (req.method === 'PATCH' && (m = /^\/api\/v1\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/.exec(path))) {
        return other('gitea', giteaOk(), m[1], null, Number(m[2]));
      }
      if (req.method === 'GET' && (m = /^\/repos\/([^/]+\/[^/]+)\/installation$/.exec(path))) {
        if (!checkJwt(req)) return send(401, { message: 'bad JWT' });
        const inst = fake.installations.find((i) => i.repositories.includes(m![1].toLowerCase()));
        return inst ? send(200, { id: inst.id }) : send(404, { message: 'Not Found' });
      }
      send(404, { message: 'Not Found' });
    };
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  // The object the server reads: a test that sets `failComments` changes what the server does.
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }) as FakeCodehost;
}
