// An app as readers see it: the spec row (apps) joined with what svc observed (app_status). Commands
// write the first, the app reconciler the second (src/observed/apps.ts); nobody writes this view.
// The few API fields that show an observed value over the spec are derived here, and mirrored in SQL by
// presenters/app-json-sql.ts (test/unit/presenters/app-json.test.ts keeps the two equal).
import type { AppRow, AppStatusRow } from './schema/index.js';

/** The observed facts of an app, with the defaults of an app that never had a live container. */
export interface AppLive {
  status: AppStatusRow['status'];
  currentDeployId: number | null;
  liveImage: string | null;
  imageBasis: string | null;
  livePort: number | null;
  portBasis: number | null;
  liveContainerName: string | null;
  liveContainerId: string | null;
  liveAddress: string | null;
  healFailures: number;
  healNotBefore: string | null;
  serving: boolean;
  statusReason: string | null;
  routeError: string | null;
  certError: string | null;
}

export type AppView = AppRow & AppLive;

/** The facts of an app with no app_status row yet (the columns' defaults); the observed writer starts from them. */
export const NO_STATUS: Omit<AppStatusRow, 'appId' | 'updatedAt'> = {
  status: 'inactive',
  liveDeployId: null,
  liveImage: null,
  imageBasis: null,
  port: null,
  portBasis: null,
  liveContainerName: null,
  liveContainerId: null,
  liveAddress: null,
  healFailures: 0,
  healNotBefore: null,
  serving: false,
  statusReason: null,
  routeError: null,
  certError: null,
};

/** app_status's columns under the names readers use. */
const liveOf = (s: Omit<AppStatusRow, 'appId' | 'updatedAt'>): AppLive => ({
  status: s.status,
  currentDeployId: s.liveDeployId,
  liveImage: s.liveImage,
  imageBasis: s.imageBasis,
  livePort: s.port,
  portBasis: s.portBasis,
  liveContainerName: s.liveContainerName,
  liveContainerId: s.liveContainerId,
  liveAddress: s.liveAddress,
  healFailures: s.healFailures,
  healNotBefore: s.healNotBefore,
  serving: s.serving,
  statusReason: s.statusReason,
  routeError: s.routeError,
  certError: s.certError,
});

export function toAppView(app: AppRow, s: AppStatusRow | null | undefined): AppView {
  return { ...app, ...liveOf(s ?? NO_STATUS) };
}

/** The port the live container listens on (routes, DNS-side probes): the observed one, else the spec's. */
export const servingPort = (v: Pick<AppView, 'internalPort' | 'livePort'>): number => v.livePort ?? v.internalPort;

/**
 * The app's `image_ref` (API.md: "a successful deploy writes its image into the app's image_ref"): the
 * live image, unless the spec's image_ref changed since that image went live (then the user's newer
 * choice). Also the image a deploy without one uses.
 */
export const shownImageRef = (v: Pick<AppView, 'imageRef' | 'liveImage' | 'imageBasis'>): string | null =>
  v.liveImage !== null && v.imageRef === v.imageBasis ? v.liveImage : v.imageRef;

/** The app's `internal_port` as shown: a build provider's port once it serves, unless the spec changed since. */
export const shownInternalPort = (v: Pick<AppView, 'internalPort' | 'livePort' | 'portBasis'>): number =>
  v.livePort !== null && v.internalPort === v.portBasis ? v.livePort : v.internalPort;

/** An adopted app becomes managed with its first deploy (API.md "Deploys"); its spec keeps what was asked. */
export const shownAppType = (v: Pick<AppView, 'appType' | 'currentDeployId'>): AppRow['appType'] =>
  v.appType === 'adopted_container' && v.currentDeployId !== null ? 'managed' : v.appType;
