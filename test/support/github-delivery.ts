// A signed GitHub webhook delivery to a test API (the unit tests of webhooks and previews).
import { signBody } from '../../src/codehost/signature.js';
import type { TestApi } from './api.js';

let delivery = 0;

/** POSTs `doc` as the GitHub event `event` to /api/webhooks/github, signed with `secret`, under a fresh delivery id. */
export function sendGithub(t: TestApi, secret: string, event: string, doc: unknown) {
  const body = JSON.stringify(doc);
  return t.request('POST', '/api/webhooks/github', undefined, {
    raw: body, contentType: 'application/json', cookie: 'none',
    headers: { 'x-github-event': event, 'x-github-delivery': `gh-${++delivery}`, 'x-hub-signature-256': signBody(secret, body) },
  });
}
