// Object store (SPEC.md 2.5): Garage v1, single node. Its config file (with the RPC secret and the admin
// token) is written into the data dir and mounted at /etc/garage.toml; the S3 access key is not generated
// by us but created through the admin API after readiness (reconcilers/service/garage-admin.ts).
import { join } from 'node:path';
import type { Credentials, ServiceKind } from './catalog.js';
import { randomHex, randomPassword } from './random.js';

export const GARAGE_S3_PORT = 3900;
export const GARAGE_RPC_PORT = 3901;
export const GARAGE_ADMIN_PORT = 3903;
export const GARAGE_REGION = 'garage';
export const GARAGE_CONFIG_FILE = 'garage.toml';

/** S3 bucket names are 3-63 characters; service names may be shorter. */
export const bucketFor = (name: string) => (name.length >= 3 ? name : `${name}-bucket`);

/** The garage.toml of a single-node store with everything under /data (pure). */
export function garageToml(c: Credentials): string {
  return [
    'metadata_dir = "/data/meta"',
    'data_dir = "/data/data"',
    'db_engine = "sqlite"',
    'replication_factor = 1',
    `rpc_bind_addr = "[::]:${GARAGE_RPC_PORT}"`,
    `rpc_public_addr = "127.0.0.1:${GARAGE_RPC_PORT}"`,
    `rpc_secret = "${c.rpc_secret}"`,
    '',
    '[s3_api]',
    `s3_region = "${GARAGE_REGION}"`,
    `api_bind_addr = "[::]:${GARAGE_S3_PORT}"`,
    'root_domain = ".s3.garage.localhost"',
    '',
    '[admin]',
    `api_bind_addr = "[::]:${GARAGE_ADMIN_PORT}"`,
    `admin_token = "${c.admin_token}"`,
    '',
  ].join('\n');
}

/** A new S3 access key in the form Garage accepts for import (`POST /v1/key/import`). */
export const garageKey = () => ({ access_key: `GK${randomHex(12)}`, secret_key: randomHex(32) });

export const garage: ServiceKind = {
  type: 'garage',
  officialImage: () => 'dxflrs/garage:v1.0.1',
  internalPort: GARAGE_S3_PORT,
  dataPath: '/data',
  generateCredentials: (name) => ({
    rpc_secret: randomHex(32),
    admin_token: randomPassword(),
    region: GARAGE_REGION,
    bucket: bucketFor(name),
    key_name: `svc-${name}`,
    // Garage's key format (GK + 12 bytes hex, 32 bytes hex), imported through the admin API at provisioning:
    // the credentials are whole from the start and only the services command ever writes them.
    ...garageKey(),
  }),
  container: (_c, place) => ({
    env: {},
    extraMounts: [{ source: join(place.dataDir, GARAGE_CONFIG_FILE), target: '/etc/garage.toml', readOnly: true }],
  }),
  files: (c) => [{ path: GARAGE_CONFIG_FILE, content: garageToml(c), mode: 0o600 }],
  readiness: () => ({ kind: 'http', port: GARAGE_S3_PORT, path: '/health' }),
  provisionsOnce: true,
  credentialFields: (c, place) => ({
    endpoint: `http://${place.host}:${GARAGE_S3_PORT}`,
    region: c.region,
    access_key: c.access_key,
    secret_key: c.secret_key,
    bucket: c.bucket,
  }),
  envPrefix: 'OBJSTORE',
  envFields: [
    ['ENDPOINT', 'endpoint'],
    ['REGION', 'region'],
    ['ACCESS_KEY', 'access_key'],
    ['SECRET_KEY', 'secret_key'],
    ['BUCKET', 'bucket'],
  ],
};
