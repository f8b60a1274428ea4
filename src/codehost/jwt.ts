// The app's JSON Web Token (API.md "Manifest flow details"): RS256 over the app's private key with Node's
// crypto, `iss` the app id, `iat` 60 s in the past (clock drift), `exp` 9 minutes ahead (under GitHub's 10).
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export function appJwt(appId: string, key: KeyObject | string, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iat: now - 60, exp: now + 9 * 60, iss: appId }));
  const input = `${header}.${payload}`;
  const privateKey = typeof key === 'string' ? createPrivateKey(key) : key;
  return `${input}.${b64url(sign('sha256', Buffer.from(input), privateKey))}`;
}
