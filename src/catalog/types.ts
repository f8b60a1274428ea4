// The service types svc knows (one catalog file each). Apart from catalog.ts so the store's schema can name
// them for its column without the catalog depending on the store (store -> catalog, never back).
export const SERVICE_TYPES = ['postgres', 'mysql', 'redis', 'garage'] as const;
export type ServiceType = (typeof SERVICE_TYPES)[number];
