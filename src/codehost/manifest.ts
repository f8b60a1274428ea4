// The first half of the manifest flow (API.md "Manifest flow details"): the app manifest svc asks the
// platform to create, and the single-use state the platform hands back to the setup callback.
// `startManifestFlow` is what both `GET /api/codehost/manifest` and the /settings page call.
import { randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';
import { saveManifestState } from '../store/codehost.js';

export const STATE_TTL_MS = 60 * 60 * 1000;
export const WEBHOOK_PATH = '/api/webhooks/codehost';
export const CALLBACK_PATH = '/api/codehost/setup-callback';

/** GitHub's app-manifest document for an svc reachable at `baseUrl` (no trailing slash). */
export function codehostManifest(baseUrl: string) {
  const host = new URL(baseUrl).host.replace(/[^A-Za-z0-9-]+/g, '-');
  return {
    name: `svc-${host}`.slice(0, 34),
    url: baseUrl,
    hook_attributes: { url: baseUrl + WEBHOOK_PATH, active: true },
    redirect_url: baseUrl + CALLBACK_PATH,
    callback_urls: [baseUrl + CALLBACK_PATH],
    public: false,
    request_oauth_on_install: false,
    setup_on_update: false,
    default_permissions: { contents: 'write', actions: 'write', metadata: 'read', packages: 'read' },
    // Installation events reach every app without being asked for.
    default_events: ['workflow_run', 'push'],
  };
}

export type CodehostManifest = ReturnType<typeof codehostManifest>;

export interface ManifestFlowStart {
  manifest: CodehostManifest;
  /** Where the browser POSTs the form field `manifest` (the JSON of `manifest`). */
  post_url: string;
  state: string;
}

/**
 * Starts a manifest flow for `userId`: a random state valid for one hour and one use, the manifest for
 * `baseUrl` (SVC_PUBLIC_URL, else the address the user reached svc on) and the platform URL to post it to.
 */
export function startManifestFlow(db: Db, o: { webUrl: string; baseUrl: string; userId: number; now: Date }): ManifestFlowStart {
  const state = randomBytes(24).toString('base64url');
  saveManifestState(db, state, o.userId, new Date(o.now.getTime() + STATE_TTL_MS), o.now);
  return { manifest: codehostManifest(o.baseUrl), post_url: `${o.webUrl}/settings/apps/new?state=${state}`, state };
}
