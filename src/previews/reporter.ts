// Reports each preview on its pull request (issue 20; API.md "Previews" > "Reported on the pull request"):
// one comment per preview, created at its first deploy and edited in place at every change of phase
// (deploying, ready, failed) and when the preview is removed. Host-neutral: a comment client per host
// (src/previews/comments/), GitHub through the GitHub App, GitLab/Gitea/Forgejo with the parent's repo_token.
//
// A report never touches the preview: it runs after the write, off the request, one at a time per preview
// (so two quick changes cannot post two comments). A failed delivery is retried after `retryDelaysMs`,
// then recorded as an app event (the code host's status and path, never a token) and dropped: the next
// change of phase, or the next start of the daemon, sends the then-current state again.
import type { Bus, PreviewGoneEvent } from '../controller/bus.js';
import type { Logger } from '../log.js';
import { getApp } from '../store/apps.js';
import type { Db } from '../store/db.js';
import type { AppRow } from '../store/schema/index.js';
import { addAppEvent, getDeploy, listDeploys } from '../store/deploys.js';
import { allPreviews, getPreview, getPreviewByApp, getPreviewById, setPreviewReport } from '../store/previews.js';
import { commentClientFor } from './comments/choose.js';
import type { ReportClient } from './comments/github.js';
import { commentBody, reportKey, reportPhase } from './report.js';

export type { ReportClient };

export interface ReporterDeps {
  db: Db;
  bus: Bus;
  log: Logger;
  client: ReportClient;
  /** True when a code-host app (id and private key) is configured: without one there is nobody to report as. */
  configured: () => boolean;
  /** An app's `repo_token` in clear (opened with the sealer; never logged), undefined when it has none. */
  repoToken?: (app: AppRow) => string | undefined;
  /** The fetch of the GitLab/Gitea/Forgejo clients (tests may pass their own). */
  fetch?: typeof fetch;
  /** Where a browser reaches an app (the API's `access_url`); null when it has no address. */
  urlOf: (app: Pick<AppRow, 'accessMode' | 'domain' | 'fallbackPort'>) => string | null;
  retryDelaysMs?: number[];
}

export interface PreviewReporter {
  start(): void;
  stop(): Promise<void>;
  /** Resolves when no report is queued or in flight (tests). */
  idle(): Promise<void>;
}

export const RETRY_DELAYS_MS = [5_000, 30_000];

export function createPreviewReporter(d: ReporterDeps): PreviewReporter {
  const delays = d.retryDelaysMs ?? RETRY_DELAYS_MS;
  const chains = new Map<number, Promise<void>>();
  const queued = new Set<number>();
  /** Comment ids learned after the preview row went (a removal report must edit, not post). */
  const known = new Map<number, string>();
  const stopping = new AbortController();
  let offs: (() => void)[] = [];

  const run = (id: number, job: () => Promise<void>) => {
    const next = (chains.get(id) ?? Promise.resolve()).then(job).catch((err) => d.log.error('preview report failed', { preview_id: id, error: String(err) }));
    chains.set(id, next);
    void next.then(() => chains.get(id) === next && chains.delete(id));
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopping.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });

  /** Runs `send` with the retries; the last failure becomes an event of `appId`. */
  async function deliver<T>(appId: number, pr: number, send: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send();
      } catch (err) {
        const reason = (err instanceof Error ? err.message : String(err)).slice(0, 300);
        if (attempt >= delays.length || stopping.signal.aborted) {
          d.log.warn('preview report not delivered', { app_id: appId, pr, attempts: attempt + 1, error: reason });
          if (getApp(d.db, appId)) addAppEvent(d.db, appId, 'pr_report', `reporting to pull request #${pr} failed after ${attempt + 1} attempt(s): ${reason}`, 'warn');
          return undefined;
        }
        await pause(delays[attempt]);
      }
    }
  }

  /** The comment client of `host`/`repository`, with the parent app's token; undefined: not reported. */
  const clientFor = (host: string, repository: string, parentId: number) => {
    const parent = getApp(d.db, parentId);
    return commentClientFor({ github: d.client, githubConfigured: d.configured, fetch: d.fetch }, host, repository, parent && {
      repoUrl: parent.repoUrl,
      token: () => d.repoToken?.(parent),
    });
  };

  /** Posts or edits the comment of preview `id` to say what its newest deploy is at, if that changed. */
  async function update(id: number) {
    const row = getPreviewById(d.db, id);
    if (!row || !row.repository) return;
    const client = clientFor(row.host, row.repository, row.parentId);
    if (!client) return;
    const app = getApp(d.db, row.appId);
    const deploy = listDeploys(d.db, row.appId)[0];
    const phase = deploy ? reportPhase(deploy.status) : null;
    if (!app || !deploy || !phase) return;
    const key = reportKey(deploy.id, phase);
    if (key === row.reported) return;
    const parent = getApp(d.db, row.parentId)?.name ?? app.name;
    const body = commentBody({ app: parent, preview: app.name, url: d.urlOf(app), sha: deploy.commitSha ?? row.headSha, phase, step: deploy.step });
    const commentId = await deliver(row.appId, row.prNumber, async () => {
      const current = getPreviewById(d.db, id)?.commentId ?? row.commentId;
      if (current && (await client.edit(row.prNumber, current, body))) return current;
      return client.post(row.prNumber, body);
    });
    if (commentId === undefined) return;
    if (getPreviewById(d.db, id)) setPreviewReport(d.db, id, { commentId, reported: key });
    else known.set(id, commentId);
  }

  /** Edits the comment of a removed preview to say so (nothing when it never got one). */
  async function gone(e: PreviewGoneEvent) {
    const commentId = e.commentId ?? known.get(e.previewId);
    known.delete(e.previewId);
    // Still there: the removal was rolled back.
    if (getPreview(d.db, e.parentId, e.prNumber)?.id === e.previewId) return;
    if (!commentId || !e.repository) return;
    // GitLab/Gitea/Forgejo: the parent's token; a deleted parent took it along (not reported then).
    const client = clientFor(e.host, e.repository, e.parentId);
    if (!client) return;
    const body = commentBody({ app: e.app, preview: e.preview, url: null, sha: e.sha, phase: 'removed', reason: e.reason });
    const eventApp = getApp(d.db, e.parentId) ? e.parentId : -1;
    await deliver(eventApp, e.prNumber, async () => client.edit(e.prNumber, commentId, body));
  }

  const schedule = (id: number) => {
    if (queued.has(id)) return;
    queued.add(id);
    run(id, async () => {
      queued.delete(id);
      await update(id);
    });
  };

  return {
    start() {
      offs = [
        d.bus.on('deploy', (deployId) => {
          const dep = getDeploy(d.db, deployId);
          const row = dep && getPreviewByApp(d.db, dep.appId);
          if (row && row.repository) schedule(row.id);
        }),
        d.bus.on('previewGone', (e) => run(e.previewId, () => gone(e))),
      ];
      // What changed while the daemon was down (or was not delivered) is sent now.
      for (const row of allPreviews(d.db)) if (row.repository) schedule(row.id);
    },
    async stop() {
      for (const off of offs) off();
      stopping.abort();
      await this.idle();
    },
    async idle() {
      while (chains.size > 0) await Promise.all([...chains.values()]);
    },
  };
}
