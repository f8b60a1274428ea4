// A small AWS Signature Version 4 signer for S3 requests (header auth and presigned URLs), enough to
// talk to Garage or its svc-test stand-in from tests without an SDK.
import { createHash, createHmac } from 'node:crypto';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Garage's default region is `garage`. */
  region: string;
  service?: string;
}

export interface S3SignInput {
  method: string;
  /** Full URL, e.g. `http://10.0.0.5:3900/bucket/some/key?list-type=2`. Path-style addressing. */
  url: string | URL;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Send `UNSIGNED-PAYLOAD` instead of the body's SHA-256. */
  unsignedPayload?: boolean;
  /** Explicit x-amz-content-sha256 value (e.g. `STREAMING-UNSIGNED-PAYLOAD-TRAILER` for aws-chunked bodies). */
  payloadHash?: string;
  /** Signing time; defaults to now. */
  date?: Date;
}

export interface SignedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
}

const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - . _ ~ (and `/` when allowed). */
export function uriEncode(value: string, encodeSlash = true): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(c) || (c === '/' && !encodeSlash)) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Path of a URL, each segment decoded then encoded once (S3 does not double-encode). */
function canonicalPath(url: URL): string {
  return url.pathname
    .split('/')
    .map((seg) => uriEncode(decodeURIComponent(seg)))
    .join('/');
}

function canonicalQuery(params: Iterable<[string, string]>): string {
  return [...params]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function amzDates(date: Date) {
  const amzDate = date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return { amzDate, dateStamp: amzDate.slice(0, 8) };
}

function signingKey(creds: S3Credentials, dateStamp: string): Buffer {
  const service = creds.service ?? 's3';
  return hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, dateStamp), creds.region), service), 'aws4_request');
}

/**
 * Signs a request with an `Authorization: AWS4-HMAC-SHA256 ...` header. Returns the URL (with the
 * path re-encoded canonically), the headers to send (including host, x-amz-date and
 * x-amz-content-sha256) and the body as a Buffer.
 */
export function signS3Request(creds: S3Credentials, input: S3SignInput): SignedRequest {
  const url = new URL(String(input.url));
  url.pathname = canonicalPath(url);
  const body = input.body === undefined ? undefined : Buffer.from(input.body);
  const { amzDate, dateStamp } = amzDates(input.date ?? new Date());
  const service = creds.service ?? 's3';
  const payloadHash = input.payloadHash ?? (input.unsignedPayload ? 'UNSIGNED-PAYLOAD' : sha256Hex(body ?? ''));

  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k.toLowerCase()] = String(v);
  headers.host = url.host;
  headers['x-amz-date'] = amzDate;
  headers['x-amz-content-sha256'] = payloadHash;
  if (body !== undefined) headers['content-length'] = String(body.length);

  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((h) => `${h}:${headers[h].trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    input.method.toUpperCase(),
    url.pathname,
    canonicalQuery(url.searchParams),
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${dateStamp}/${creds.region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = hmac(signingKey(creds, dateStamp), stringToSign).toString('hex');
  headers.authorization =
    `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { method: input.method.toUpperCase(), url: url.toString(), headers, body };
}

/** A presigned URL (query-string auth, `UNSIGNED-PAYLOAD`, only `host` signed). */
export function presignS3Url(
  creds: S3Credentials,
  input: { method: string; url: string | URL; expiresSeconds?: number; date?: Date },
): string {
  const url = new URL(String(input.url));
  url.pathname = canonicalPath(url);
  const { amzDate, dateStamp } = amzDates(input.date ?? new Date());
  const service = creds.service ?? 's3';
  const scope = `${dateStamp}/${creds.region}/${service}/aws4_request`;
  url.searchParams.set('X-Amz-Algorithm', 'AWS4-HMAC-SHA256');
  url.searchParams.set('X-Amz-Credential', `${creds.accessKeyId}/${scope}`);
  url.searchParams.set('X-Amz-Date', amzDate);
  url.searchParams.set('X-Amz-Expires', String(input.expiresSeconds ?? 900));
  url.searchParams.set('X-Amz-SignedHeaders', 'host');
  const canonicalRequest = [
    input.method.toUpperCase(),
    url.pathname,
    canonicalQuery(url.searchParams),
    `host:${url.host}\n`,
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = hmac(signingKey(creds, dateStamp), stringToSign).toString('hex');
  // Rebuild the query with RFC 3986 encoding so the server decodes exactly what was signed.
  const query = canonicalQuery(url.searchParams);
  return `${url.protocol}//${url.host}${url.pathname}?${query}&X-Amz-Signature=${signature}`;
}

/** Signs and sends a request with fetch; returns the Response. */
export async function s3Fetch(creds: S3Credentials, input: S3SignInput): Promise<Response> {
  const signed = signS3Request(creds, input);
  const headers = { ...signed.headers };
  delete headers.host; // fetch sets Host from the URL (it forbids setting it), identical value
  delete headers['content-length'];
  const body = signed.body ? new Uint8Array(signed.body).buffer : undefined; // a copy fetch accepts
  return fetch(signed.url, { method: signed.method, headers, body });
}
