// GitHub's payloads (payloads.ts) in the host-neutral form of events.ts.
import type { CiRunEvent, PushEvent } from './events.js';
import type { PullRequestPayload, PushPayload, WorkflowRunPayload } from './payloads.js';

export const githubPush = (p: PushPayload): PushEvent => ({ repo: p.repository.full_name, ref: p.ref, after: p.after, deleted: !!p.deleted });

export function githubWorkflowRun(p: WorkflowRunPayload): CiRunEvent {
  const run = p.workflow_run;
  const head = run.head_repository?.full_name;
  const strings = (...xs: (string | null | undefined)[]) => xs.filter((x): x is string => !!x);
  return {
    kind: 'workflow_run',
    repo: p.repository.full_name,
    // GitHub sends `completed` once, with the conclusion; `requested` / `in_progress` before it.
    completed: p.action === 'completed',
    state: `action ${p.action}`,
    conclusion: run.conclusion ?? null,
    branch: run.head_branch ?? null,
    sha: run.head_sha,
    trigger: run.event ?? null,
    fromFork: head && head.toLowerCase() !== p.repository.full_name.toLowerCase() ? head : null,
    names: strings(run.name, p.workflow?.name),
    paths: strings(run.path, p.workflow?.path),
  };
}

