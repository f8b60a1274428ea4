// Webhook signatures (API.md "Code host"): `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
// Computed over the exact bytes received (never a re-serialised JSON), compared in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { safeEqual } from '../crypto.js';

/** The header value a sender puts on `body`: `sha256=<hex>`. Used by tests, the example CI and the bench. */
export function signBody(secret: string, body: Uint8Array | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * True only when `header` is exactly `sha256=<64 hex>` and equals the HMAC of `body` under `secret`.
 * The comparison is constant-time over equal-length buffers; a malformed header fails before any
 * comparison (its length says nothing about the secret).
 */
export function verifySignature(secret: string, body: Uint8Array, header: string | undefined): boolean {
  if (!header) return false;
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!m) return false;
  const given = Buffer.from(m[1].toLowerCase(), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Gitea's and Forgejo's `X-Gitea-Signature` / `X-Forgejo-Signature`: the bare hex HMAC-SHA256 of the raw
 * body (no `sha256=` prefix), checked like verifySignature.
 */
export function verifyHexSignature(secret: string, body: Uint8Array, header: string | undefined): boolean {
  return verifySignature(secret, body, header === undefined ? undefined : `sha256=${header.trim()}`);
}

/** GitLab's `X-Gitlab-Token`: the secret itself, compared in constant time whatever its length. */
export function verifyToken(secret: string, header: string | undefined): boolean {
  return header !== undefined && safeEqual(header, secret);
}
