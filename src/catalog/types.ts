// The service types svc knows (one catalog file each) and the versions each is offered at. Apart from
// catalog.ts so the store's schema can name them for its column without the catalog depending on the store
// (store -> catalog, never back).
export const SERVICE_TYPES = ['postgres', 'mysql', 'redis', 'garage'] as const;
export type ServiceType = (typeof SERVICE_TYPES)[number];

/**
 * The versions a service is created at (issue 33), oldest first: the newest is the default. A version is
 * a major (mysql's are its LTS lines): images of one version keep reading each other's data, so moving
 * between them is a restart; moving between versions is a guarded upgrade.
 */
export const SERVICE_VERSIONS: Record<ServiceType, readonly string[]> = {
  postgres: ['15', '16', '17', '18'],
  mysql: ['8.0', '8.4'],
  redis: ['7', '8'],
  garage: ['1'],
};

/** The version a service gets when none is asked for: the newest. */
export const newestVersion = (type: ServiceType): string => SERVICE_VERSIONS[type][SERVICE_VERSIONS[type].length - 1];

/**
 * The version a service made before versions existed runs: what its default image was then
 * (postgres:16, mysql:8 when it meant 8.0, redis:7-alpine, garage v1). Migration 0027 writes the same.
 */
export const LEGACY_VERSIONS: Record<ServiceType, string> = { postgres: '16', mysql: '8.0', redis: '7', garage: '1' };

/** `17` -> `17`, `8.4` -> `8_4`: the suffix of the version's image variable. */
export const versionSuffix = (version: string) => version.replace(/\./g, '_');

/** Whether `to` is a later version of the type than `from` (both offered). */
export const isLaterVersion = (type: ServiceType, from: string, to: string): boolean => {
  const list = SERVICE_VERSIONS[type];
  return list.indexOf(to) > list.indexOf(from) && list.indexOf(from) >= 0;
};
