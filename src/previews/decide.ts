// What a pull-request or branch-deletion event asks for (API.md "Previews"): pure, table-tested. Events are
// host-neutral (src/previews/events.ts): each code host's webhook route normalizes its delivery, calls
// this, and runs what it says through the previews command (src/desired/previews.ts).
import { repoMatches } from '../codehost/repository.js';
import type { AppFacts } from '../codehost/decide.js';
import type { AppRow, PreviewRow } from '../store/schema/index.js';
import type { BranchDeletedEvent, CodeHost, PreviewImageEvent, PullRequestEvent } from './events.js';
import { imageForCommit } from '../codehost/repository.js';
import { settingsOf } from './settings.js';

export type PreviewFacts = AppFacts & Pick<AppRow, 'previews'>;

export interface PullRequest {
  number: number;
  sha: string;
  headRef: string;
  /** The head is in another repository than the base (or its repository is gone). */
  fork: boolean;
  /** Where it came from: reports go back there. */
  host: CodeHost;
  repository: string;
}

export type PreviewAction<A> = { kind: 'upsert'; parent: A; pr: PullRequest } | { kind: 'teardown'; parent: A; pr: number };
export type PreviewDecision<A> = { kind: 'ignored'; reason: string } | { kind: 'act'; actions: PreviewAction<A>[] };

const sameRepo = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * update (opened / reopened / new commits): a preview of each `svc_build` app of the repository whose
 * branch is the pull request's base and whose previews are on; close (merged or not): teardown of the
 * apps' previews of that number, whatever the settings say now. A fork's head only when the app allows forks.
 */
export function decidePullRequest<A extends PreviewFacts>(e: PullRequestEvent, apps: A[]): PreviewDecision<A> {
  const repo = apps.filter((a) => a.appType !== 'external_service' && repoMatches(a.repoUrl, e.repository));
  if (repo.length === 0) return { kind: 'ignored', reason: `no app for repository ${e.repository}` };
  // Closed: every preview of that number goes, even if the base branch was changed since it was opened.
  if (e.kind === 'close') return { kind: 'act', actions: repo.map((parent) => ({ kind: 'teardown', parent, pr: e.number })) };
  const onBase = repo.filter((a) => a.branch === e.baseRef);
  if (onBase.length === 0) return { kind: 'ignored', reason: `base branch ${e.baseRef} is not deployed` };
  if (e.kind !== 'update') return { kind: 'ignored', reason: `pull_request action ${e.action}` };
  const enabled = onBase.filter((a) => settingsOf(a.previews).enabled);
  if (enabled.length === 0) return { kind: 'ignored', reason: 'previews are off for this app' };
  // external_ci: the preview app is made now; its image arrives with the CI run of the head (decidePreviewImage).
  const built = enabled.filter((a) => a.buildMode === 'svc_build' || (a.buildMode === 'external_ci' && a.imageRef));
  if (built.length === 0) return { kind: 'ignored', reason: 'an external_ci app needs an image_ref to derive its previews\' images from' };
  const fork = e.head.fork;
  const allowed = fork ? built.filter((a) => settingsOf(a.previews).forks) : built;
  if (allowed.length === 0) return { kind: 'ignored', reason: `pull request from fork ${e.head.repository ?? '(deleted)'}` };
  const facts: PullRequest = { number: e.number, sha: e.head.sha, headRef: e.head.ref, fork, host: e.host, repository: e.repository };
  return { kind: 'act', actions: allowed.map((parent) => ({ kind: 'upsert', parent, pr: facts })) };
}

/**
 * A deleted branch removes the previews whose pull request's head it was: same-repository heads only (a
 * fork's branch of the same name is another branch), of the apps of that repository.
 */
export function decideBranchDeleted<A extends PreviewFacts>(
  e: BranchDeletedEvent,
  apps: A[],
  previews: Pick<PreviewRow, 'parentId' | 'prNumber' | 'headRef' | 'fork'>[],
): PreviewDecision<A> {
  const repo = apps.filter((a) => repoMatches(a.repoUrl, e.repository));
  const actions = previews
    .filter((p) => !p.fork && p.headRef === e.branch)
    .flatMap((p) => repo.filter((a) => a.id === p.parentId).map((parent): PreviewAction<A> => ({ kind: 'teardown', parent, pr: p.prNumber })));
  if (actions.length === 0) return { kind: 'ignored', reason: `no preview of branch ${e.branch}` };
  return { kind: 'act', actions };
}

/**
 * A successful CI run of a pull request's head deploys `<parent image>:<sha>` to the preview of each
 * `external_ci` app of the repository whose pull request has that head branch and commit (a run of an
 * older commit of the branch is ignored: the preview has moved on). A fork's run only for a fork preview.
 */
export function decidePreviewImage<A extends PreviewFacts>(
  e: PreviewImageEvent,
  apps: A[],
  previews: Pick<PreviewRow, 'appId' | 'parentId' | 'prNumber' | 'headRef' | 'headSha' | 'fork'>[],
): { kind: 'ignored'; reason: string } | { kind: 'deploy'; deploys: { parent: A; previewAppId: number; pr: number; imageRef: string; sha: string }[] } {
  const repo = apps.filter((a) => a.buildMode === 'external_ci' && a.imageRef && repoMatches(a.repoUrl, e.repository));
  if (repo.length === 0) return { kind: 'ignored', reason: `run triggered by pull_request: no external_ci app for repository ${e.repository}` };
  const fromFork = !!e.headRepository && !sameRepo(e.headRepository, e.repository);
  const deploys = previews.flatMap((p) => {
    if (p.headRef !== e.branch || p.headSha !== e.sha.toLowerCase() || p.fork !== fromFork) return [];
    return repo.filter((a) => a.id === p.parentId && e.selects(a.ciWorkflow)).map((parent) => ({ parent, previewAppId: p.appId, pr: p.prNumber, imageRef: imageForCommit(parent.imageRef!, e.sha), sha: e.sha }));
  });
  if (deploys.length === 0) return { kind: 'ignored', reason: `run triggered by pull_request: no preview at ${e.branch}@${e.sha.slice(0, 12)}` };
  return { kind: 'deploy', deploys };
}

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
