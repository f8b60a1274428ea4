// What a verified delivery asks for (API.md "Code host", "Building from source"): pure, table-tested.
// The webhook routes only parse, normalize (events.ts), call this, and write what it says through the store.
// Every code host's deliveries come here in the same host-neutral form.
import type { AppRow } from '../store/schema/index.js';
import type { CiRunEvent, PushEvent } from './events.js';
import { isCommitSha } from './payloads.js';
import { builtImage, imageForCommit, repoMatches } from './repository.js';

export type AppFacts = Pick<AppRow, 'id' | 'name' | 'appType' | 'buildMode' | 'repoUrl' | 'branch' | 'imageRef' | 'ciWorkflow'>;

export interface PlannedDeploy<A extends AppFacts = AppFacts> {
  app: A;
  imageRef: string;
  commitSha: string;
}

export type Decision<A extends AppFacts = AppFacts> = { kind: 'ignored'; reason: string } | { kind: 'deploy'; deploys: PlannedDeploy<A>[] };

const deployable = (a: AppFacts) => a.appType !== 'external_service';

/** Runs started by a pull/merge request build its head: they never deploy the base branch. */
const PR_TRIGGERS = ['pull_request', 'pull_request_target', 'merge_request_event'];

/** True when the run is the one the app names (a workflow file path, a workflow, job or pipeline name). */
export function workflowSelected(ciWorkflow: string | null, run: Pick<CiRunEvent, 'names' | 'paths'>): boolean {
  if (!ciWorkflow) return true;
  const want = ciWorkflow.trim().replace(/^\.?\//, '');
  const paths = run.paths.map((x) => x.replace(/^\.?\//, '').split('@')[0]);
  return paths.includes(want) || run.names.includes(ciWorkflow.trim());
}

/** A completed, successful run on an `external_ci` app's branch deploys `<image>:<sha>`. */
export function decideCiRun<A extends AppFacts>(run: CiRunEvent, apps: A[]): Decision<A> {
  if (!run.completed) return { kind: 'ignored', reason: `${run.kind} ${run.state}` };
  if (run.conclusion !== 'success') return { kind: 'ignored', reason: `${run.kind} conclusion ${run.conclusion ?? 'none'}` };
  if (run.trigger && PR_TRIGGERS.includes(run.trigger)) return { kind: 'ignored', reason: `run triggered by ${run.trigger}` };
  if (run.fromFork) return { kind: 'ignored', reason: `run from fork ${run.fromFork}` };
  const repo = apps.filter((a) => deployable(a) && a.buildMode === 'external_ci' && repoMatches(a.repoUrl, run.repo));
  if (repo.length === 0) return { kind: 'ignored', reason: `no external_ci app for repository ${run.repo}` };
  const onBranch = repo.filter((a) => a.branch === run.branch);
  if (onBranch.length === 0) return { kind: 'ignored', reason: `branch ${run.branch ?? '(none)'} is not deployed` };
  const selected = onBranch.filter((a) => (!run.namedOnly || !!a.ciWorkflow) && workflowSelected(a.ciWorkflow, run));
  if (selected.length === 0) {
    return { kind: 'ignored', reason: run.namedOnly ? `a ${run.kind} deploys only an app whose ci_workflow names it` : 'workflow is not the app\'s ci_workflow' };
  }
  const withImage = selected.filter((a) => a.imageRef);
  if (withImage.length === 0) return { kind: 'ignored', reason: 'the app has no image_ref to derive the image name from' };
  return { kind: 'deploy', deploys: withImage.map((app) => ({ app, imageRef: imageForCommit(app.imageRef!, run.sha), commitSha: run.sha })) };
}

/** A branch push to a `svc_build` app's branch builds `after`. Tags and deletions are ignored. */
export function decidePush<A extends AppFacts>(p: PushEvent, apps: A[]): Decision<A> {
  if (p.ref.startsWith('refs/tags/')) return { kind: 'ignored', reason: 'tag push' };
  if (p.deleted) return { kind: 'ignored', reason: 'branch deleted' };
  if (!p.ref.startsWith('refs/heads/')) return { kind: 'ignored', reason: `ref ${p.ref} is not a branch` };
  if (!isCommitSha(p.after)) return { kind: 'ignored', reason: 'push without a commit to build' };
  const branch = p.ref.slice('refs/heads/'.length);
  const sha = p.after.toLowerCase();
  const repo = apps.filter((a) => deployable(a) && a.buildMode === 'svc_build' && repoMatches(a.repoUrl, p.repo));
  if (repo.length === 0) return { kind: 'ignored', reason: `no svc_build app for repository ${p.repo}` };
  const onBranch = repo.filter((a) => a.branch === branch);
  if (onBranch.length === 0) return { kind: 'ignored', reason: `branch ${branch} is not deployed` };
  return { kind: 'deploy', deploys: onBranch.map((app) => ({ app, imageRef: builtImage(app.name, sha), commitSha: sha })) };
}
