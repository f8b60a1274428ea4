// What svc says on a pull request about its preview (issue 20, API.md "Previews" > "Reported on the pull
// request"): one comment per preview, posted once and then edited in place. Pure: the phase a deploy
// status is reported as, the key that says whether the comment is up to date, and the comment's text.
import type { DeployStatus } from '../store/schema/index.js';

export type ReportPhase = 'deploying' | 'ready' | 'failed';

/** The phase a deploy's status is reported as; null for `cancelled` (a newer deploy of the preview follows). */
export function reportPhase(status: DeployStatus): ReportPhase | null {
  if (status === 'pending' || status === 'running') return 'deploying';
  if (status === 'success') return 'ready';
  if (status === 'failed' || status === 'auto_rollback') return 'failed';
  return null;
}

/** What the comment says now, as stored in `previews.reported`: a report is due when this changes. */
export const reportKey = (deployId: number, phase: ReportPhase | 'removed') => `${deployId}:${phase}`;

export interface CommentFacts {
  /** The parent app and the preview app. */
  app: string;
  preview: string;
  url: string | null;
  sha: string;
  phase: ReportPhase | 'removed';
  /** `failed`: the pipeline step it failed at (never the error text: the comment may be public). */
  step?: string | null;
  /** `removed`: why. */
  reason?: string;
}

/** The marker that identifies svc's comment for one preview (a later version may look for it). */
export const commentMarker = (preview: string) => `<!-- svc-preview:${preview} -->`;

const HEADLINE: Record<CommentFacts['phase'], string> = {
  deploying: '⏳ Deploying',
  ready: '✅ Ready',
  failed: '❌ Deploy failed',
  removed: '🗑️ Removed',
};

export function commentBody(f: CommentFacts): string {
  const lines = [commentMarker(f.preview), `**svc preview of \`${f.app}\`: ${HEADLINE[f.phase]}**`, ''];
  if (f.phase === 'removed') {
    lines.push(`The preview \`${f.preview}\` and everything it ran on (containers, its services and their data, routes, images) was removed${f.reason ? `: ${f.reason}` : ''}.`);
  } else {
    if (f.url) lines.push(`- URL: ${f.phase === 'ready' ? f.url : `${f.url} (${f.phase === 'deploying' ? 'when ready' : 'serving the previous commit, if any'})`}`);
    lines.push(`- Commit: \`${f.sha.slice(0, 12)}\``);
    lines.push(`- App: \`${f.preview}\``);
    if (f.phase === 'failed' && f.step) lines.push(`- Failed at: ${f.step}`);
  }
  return lines.join('\n') + '\n';
}
