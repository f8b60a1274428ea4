// Garage provisioning through its admin API v1 (doc/api/garage-admin-v1.yml): single-node layout, the
// bucket, the access key and the key's grant on the bucket. Each step looks before it writes, so running
// the whole sequence again after a crash at any point finishes the job without duplicates.

export type FetchFn = (url: string, init?: RequestInit) => Promise<Response>;

export interface GarageAdminTarget {
  /** `http://<container address>:3903` */
  baseUrl: string;
  adminToken: string;
  bucket: string;
  keyName: string;
}

interface LayoutRole {
  id: string;
}
interface ClusterStatus {
  node: string;
}
interface ClusterLayout {
  version: number;
  roles: LayoutRole[];
  stagedRoleChanges: LayoutRole[];
}
interface BucketInfo {
  id: string;
  keys?: { accessKeyId: string; permissions?: { read?: boolean; write?: boolean; owner?: boolean } }[];
}
interface KeyInfo {
  accessKeyId: string;
  secretAccessKey?: string | null;
}

export class GarageAdminError extends Error {}

/** Layout capacity of the one node, in bytes; with a single node it only has to be non-zero. */
const NODE_CAPACITY = 1_000_000_000_000;

/** Runs every provisioning step (idempotent); returns the access key id and its secret. */
export async function provisionGarage(fetchFn: FetchFn, t: GarageAdminTarget, timeoutMs = 5_000): Promise<{ accessKey: string; secretKey: string }> {
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown, allow404 = false): Promise<T | undefined> => {
    const res = await fetchFn(`${t.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${t.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (allow404 && res.status === 404) return undefined;
    if (!res.ok) throw new GarageAdminError(`garage admin ${method} ${path.split('?')[0]}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : {}) as T;
  };

  // 1. The node (its id from the status) gets a role in the layout: staged, then applied as version + 1.
  const { node } = (await call<ClusterStatus>('GET', '/v1/status'))!;
  const layout = (await call<ClusterLayout>('GET', '/v1/layout'))!;
  if (!layout.roles.some((r) => r.id === node)) {
    if (!layout.stagedRoleChanges.some((r) => r.id === node)) {
      await call('POST', '/v1/layout', [{ id: node, zone: 'dc1', capacity: NODE_CAPACITY, tags: ['svc'] }]);
    }
    await call('POST', '/v1/layout/apply', { version: layout.version + 1 });
  }

  // 2. The bucket, found by its global alias.
  const alias = encodeURIComponent(t.bucket);
  let bucket = await call<BucketInfo>('GET', `/v1/bucket?globalAlias=${alias}`, undefined, true);
  if (!bucket) bucket = (await call<BucketInfo>('POST', '/v1/bucket', { globalAlias: t.bucket }))!;

  // 3. The key, found by its exact name (the search endpoint matches prefixes).
  const keys = (await call<{ id: string; name: string }[]>('GET', '/v1/key'))!;
  const found = keys.find((k) => k.name === t.keyName);
  const key = found
    ? (await call<KeyInfo>('GET', `/v1/key?id=${encodeURIComponent(found.id)}&showSecretKey=true`))!
    : (await call<KeyInfo>('POST', '/v1/key', { name: t.keyName }))!;
  if (!key.accessKeyId || !key.secretAccessKey) throw new GarageAdminError('garage admin: the key has no secret in the answer');

  // 4. Read, write and owner on the bucket (allow only ever adds flags, so repeating it is harmless).
  const grant = bucket.keys?.find((k) => k.accessKeyId === key.accessKeyId)?.permissions;
  if (!grant?.read || !grant.write || !grant.owner) {
    await call('POST', '/v1/bucket/allow', {
      bucketId: bucket.id,
      accessKeyId: key.accessKeyId,
      permissions: { read: true, write: true, owner: true },
    });
  }
  return { accessKey: key.accessKeyId, secretKey: key.secretAccessKey };
}
