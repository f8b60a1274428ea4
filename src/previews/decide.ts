// What a verified `pull_request` delivery asks for (API.md "Previews"): pure, table-tested. The webhook
// route parses, calls this, and runs what it says through the previews command (src/desired/previews.ts).
import type { PullRequestPayload } from '../codehost/payloads.js';
import { repoMatches } from '../codehost/repository.js';
import type { PullRequestEvent } from '../codehost/events.js';
import { githubPullRequest } from '../codehost/github.js';
import type { AppFacts } from '../codehost/decide.js';
import type { AppRow } from '../store/schema/index.js';
import { settingsOf } from './settings.js';

export type PreviewFacts = AppFacts & Pick<AppRow, 'previews'>;

export interface PullRequest {
  number: number;
  sha: string;
  headRef: string;
  /** The head is in another repository than the base (or its repository is gone). */
  fork: boolean;
}

export type PreviewAction<A> = { kind: 'upsert'; parent: A; pr: PullRequest } | { kind: 'teardown'; parent: A; pr: number };
export type PreviewDecision<A> = { kind: 'ignored'; reason: string } | { kind: 'act'; actions: PreviewAction<A>[] };

export const UPSERT_ACTIONS = ['opened', 'reopened', 'synchronize'] as const;

/**
 * opened / reopened / synchronize: a preview of each `svc_build` app of the repository whose branch is the
 * pull request's base and whose previews are on; closed (merged or not): teardown of the apps' previews of
 * that number, whatever the settings say now. A fork's head only when the app allows forks. Every code host's
 * pull or merge request arrives here in the host-neutral form (src/codehost/events.ts).
 */
export function decidePreview<A extends PreviewFacts>(p: PullRequestEvent, apps: A[]): PreviewDecision<A> {
  const repo = apps.filter((a) => a.appType !== 'external_service' && repoMatches(a.repoUrl, p.repo));
  if (repo.length === 0) return { kind: 'ignored', reason: `no app for repository ${p.repo}` };
  // Closed: every preview of that number goes, even if the base branch was changed since it was opened.
  if (p.action === 'closed') return { kind: 'act', actions: repo.map((parent) => ({ kind: 'teardown', parent, pr: p.number })) };
  const onBase = repo.filter((a) => a.branch === p.baseRef);
  if (onBase.length === 0) return { kind: 'ignored', reason: `base branch ${p.baseRef} is not deployed` };
  if (!(UPSERT_ACTIONS as readonly string[]).includes(p.action)) return { kind: 'ignored', reason: `pull_request action ${p.action}` };
  const enabled = onBase.filter((a) => settingsOf(a.previews).enabled);
  if (enabled.length === 0) return { kind: 'ignored', reason: 'previews are off for this app' };
  const built = enabled.filter((a) => a.buildMode === 'svc_build');
  if (built.length === 0) return { kind: 'ignored', reason: 'previews of external_ci apps are not supported yet' };
  const fork = p.head.fork;
  const allowed = fork ? built.filter((a) => settingsOf(a.previews).forks) : built;
  if (allowed.length === 0) return { kind: 'ignored', reason: `pull request from fork ${p.head.repo ?? '(deleted)'}` };
  const facts: PullRequest = { number: p.number, sha: p.head.sha, headRef: p.head.ref, fork };
  return { kind: 'act', actions: allowed.map((parent) => ({ kind: 'upsert', parent, pr: facts })) };
}

/** A GitHub `pull_request` delivery: decidePreview of its neutral form. */
export const decidePullRequest = <A extends PreviewFacts>(p: PullRequestPayload, apps: A[]): PreviewDecision<A> => decidePreview(githubPullRequest(p), apps);

/** True when a preview's last commit is older than `ttlDays`. */
export function expired(lastCommitAt: string, ttlDays: number, now: Date): boolean {
  return now.getTime() - Date.parse(lastCommitAt) >= ttlDays * 86_400_000;
}

/** The previews to remove so one more fits under `max` (the ones with the oldest last commit go first). */
export function evictions<P extends { prNumber: number; lastCommitAt: string }>(existing: P[], max: number): P[] {
  const over = existing.length + 1 - max;
  if (over <= 0) return [];
  return [...existing].sort((a, b) => a.lastCommitAt.localeCompare(b.lastCommitAt) || a.prNumber - b.prNumber).slice(0, over);
}
