// What a verified delivery asks for (API.md "Code host", "Building from source"): pure, table-tested.
// The webhook route only parses, calls this, and writes what it says through the store.
import type { AppRow } from '../store/schema/index.js';
import { isCommitSha, type PushPayload, type WorkflowRunPayload } from './payloads.js';
import { builtImage, imageForCommit, repoMatches } from './repository.js';

export type AppFacts = Pick<AppRow, 'id' | 'name' | 'appType' | 'buildMode' | 'repoUrl' | 'branch' | 'imageRef' | 'ciWorkflow'>;

export interface PlannedDeploy<A extends AppFacts = AppFacts> {
  app: A;
  imageRef: string;
  commitSha: string;
}

export type Decision<A extends AppFacts = AppFacts> = { kind: 'ignored'; reason: string } | { kind: 'deploy'; deploys: PlannedDeploy<A>[] };

const deployable = (a: AppFacts) => a.appType !== 'external_service';

/** True when the run's workflow is the one the app names (a file path or the workflow's name). */
export function workflowSelected(ciWorkflow: string | null, p: WorkflowRunPayload): boolean {
  if (!ciWorkflow) return true;
  const want = ciWorkflow.trim().replace(/^\.?\//, '');
  const paths = [p.workflow_run.path, p.workflow?.path].filter((x): x is string => !!x).map((x) => x.replace(/^\.?\//, '').split('@')[0]);
  const names = [p.workflow_run.name, p.workflow?.name].filter((x): x is string => !!x);
  return paths.includes(want) || names.includes(ciWorkflow.trim());
}

/** `workflow_run`: a completed, successful run on an `external_ci` app's branch deploys `<image>:<head_sha>`. */
export function decideWorkflowRun<A extends AppFacts>(p: WorkflowRunPayload, apps: A[]): Decision<A> {
  const run = p.workflow_run;
  if (p.action !== 'completed') return { kind: 'ignored', reason: `workflow_run action ${p.action}` };
  if (run.conclusion !== 'success') return { kind: 'ignored', reason: `workflow_run conclusion ${run.conclusion ?? 'none'}` };
  if (run.event === 'pull_request' || run.event === 'pull_request_target') return { kind: 'ignored', reason: `run triggered by ${run.event}` };
  const head = run.head_repository?.full_name;
  if (head && head.toLowerCase() !== p.repository.full_name.toLowerCase()) return { kind: 'ignored', reason: `run from fork ${head}` };
  const repo = apps.filter((a) => deployable(a) && a.buildMode === 'external_ci' && repoMatches(a.repoUrl, p.repository.full_name));
  if (repo.length === 0) return { kind: 'ignored', reason: `no external_ci app for repository ${p.repository.full_name}` };
  const onBranch = repo.filter((a) => a.branch === run.head_branch);
  if (onBranch.length === 0) return { kind: 'ignored', reason: `branch ${run.head_branch ?? '(none)'} is not deployed` };
  const selected = onBranch.filter((a) => workflowSelected(a.ciWorkflow, p));
  if (selected.length === 0) return { kind: 'ignored', reason: 'workflow is not the app\'s ci_workflow' };
  const withImage = selected.filter((a) => a.imageRef);
  if (withImage.length === 0) return { kind: 'ignored', reason: 'the app has no image_ref to derive the image name from' };
  return { kind: 'deploy', deploys: withImage.map((app) => ({ app, imageRef: imageForCommit(app.imageRef!, run.head_sha), commitSha: run.head_sha })) };
}

/** `push`: a branch push to a `svc_build` app's branch builds `after`. Tags and deletions are ignored. */
export function decidePush<A extends AppFacts>(p: PushPayload, apps: A[]): Decision<A> {
  if (p.ref.startsWith('refs/tags/')) return { kind: 'ignored', reason: 'tag push' };
  if (p.deleted) return { kind: 'ignored', reason: 'branch deleted' };
  if (!p.ref.startsWith('refs/heads/')) return { kind: 'ignored', reason: `ref ${p.ref} is not a branch` };
  if (!isCommitSha(p.after)) return { kind: 'ignored', reason: 'push without a commit to build' };
  const branch = p.ref.slice('refs/heads/'.length);
  const sha = p.after.toLowerCase();
  const repo = apps.filter((a) => deployable(a) && a.buildMode === 'svc_build' && repoMatches(a.repoUrl, p.repository.full_name));
  if (repo.length === 0) return { kind: 'ignored', reason: `no svc_build app for repository ${p.repository.full_name}` };
  const onBranch = repo.filter((a) => a.branch === branch);
  if (onBranch.length === 0) return { kind: 'ignored', reason: `branch ${branch} is not deployed` };
  return { kind: 'deploy', deploys: onBranch.map((app) => ({ app, imageRef: builtImage(app.name, sha), commitSha: sha })) };
}
