// A tiny cookie-keeping browser stand-in for UI unit tests: GET pages, POST forms the way a browser does
// (urlencoded, with the CSRF token of the last page it saw), and follow nothing by itself.
import type { Hono } from 'hono';
import { createTestApi, type TestApi } from '../../support/api.js';

export interface Page {
  status: number;
  html: string;
  location: string | null;
  headers: Headers;
}

/** A test API with an administrator signed in, and a form client that carries the session cookie. */
export async function signedInForms(): Promise<{ t: TestApi; b: ReturnType<typeof formClient> }> {
  const t = createTestApi();
  const { cookie } = await t.login();
  const b = formClient(t.app);
  b.jar.set('session', cookie);
  return { t, b };
}

export function formClient(app: Pick<Hono<any>, 'request'>) {
  const jar = new Map<string, string>();
  let lastHtml = '';

  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (/max-age=0/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

  async function send(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Page> {
    const res = await app.request(path, {
      method,
      headers: { ...(jar.size ? { cookie: cookie() } : {}), ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body,
    });
    remember(res);
    const html = await res.text();
    if (res.headers.get('content-type')?.includes('text/html')) lastHtml = html;
    return { status: res.status, html, location: res.headers.get('location'), headers: res.headers };
  }

  /** The CSRF token in the last page seen. */
  const token = () => /name="_csrf" value="([^"]+)"/.exec(lastHtml)?.[1] ?? '';

  return {
    jar,
    get: (path: string) => send('GET', path),
    /** A form post; `csrf: false` leaves the token out, a string sends that token instead. */
    post(path: string, fields: Record<string, string> = {}, o: { csrf?: boolean | string; headers?: Record<string, string> } = {}) {
      const all = { ...fields };
      if (o.csrf !== false) all._csrf = typeof o.csrf === 'string' ? o.csrf : token();
      return send('POST', path, new URLSearchParams(all).toString(), o.headers);
    },
    /** GET then follow redirects (up to 5), like a browser after a form post. */
    async follow(p: Page): Promise<Page> {
      for (let i = 0; i < 5 && p.location; i++) p = await send('GET', p.location);
      return p;
    },
  };
}

/** Text of the first element with the given role attribute (role="alert" / "status"), tags stripped. */
export function roleText(html: string, role: string): string | undefined {
  const m = new RegExp(`role="${role}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return m?.[1].replace(/<[^>]+>/g, '').trim();
}
