// Garage provisioning through its admin API v1 (doc/api/garage-admin-v1.yml): single-node layout, the
// bucket, the access key (generated with the credentials by the services command, imported here) and the
// key's grant on the bucket. Each step looks before it writes, so running
// the whole sequence again after a crash at any point finishes the job without duplicates.

export type FetchFn = (url: string, init?: RequestInit) => Promise<Response>;

export interface GarageAdminTarget {
  /** `http://<container address>:3903` */
  baseUrl: string;
  adminToken: string;
  bucket: string;
  keyName: string;
  /** The key of the service's credentials: imported when Garage does not know it yet. */
  accessKey: string;
  secretKey: string;
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
}

export class GarageAdminError extends Error {}

/** Layout capacity of the one node, in bytes; with a single node it only has to be non-zero. */
const NODE_CAPACITY = 1_000_000_000_000;

/** Runs every provisioning step (idempotent); afterwards the credentials' key reads and writes the bucket. */
export async function provisionGarage(fetchFn: FetchFn, t: GarageAdminTarget, timeoutMs = 5_000): Promise<void> {
  if (!t.accessKey || !t.secretKey) throw new GarageAdminError('garage admin: the credentials hold no access key');
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

  // 3. The credentials' key, found by its id, else imported under the key name.
  const known = await call<KeyInfo>('GET', `/v1/key?id=${encodeURIComponent(t.accessKey)}`, undefined, true);
  const key = known ?? (await call<KeyInfo>('POST', '/v1/key/import', { accessKeyId: t.accessKey, secretAccessKey: t.secretKey, name: t.keyName }))!;

  // 4. Read, write and owner on the bucket (allow only ever adds flags, so repeating it is harmless).
  const grant = bucket.keys?.find((k) => k.accessKeyId === key.accessKeyId)?.permissions;
  if (!grant?.read || !grant.write || !grant.owner) {
    await call('POST', '/v1/bucket/allow', {
      bucketId: bucket.id,
      accessKeyId: key.accessKeyId,
      permissions: { read: true, write: true, owner: true },
    });
  }
}
