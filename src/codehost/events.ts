// The host-neutral form of the deliveries svc acts on (API.md "Code hosts beyond GitHub"). Each code host's
// route parses its own payload (github.ts, gitlab.ts, gitea.ts) and normalizes it into one of these; the
// decisions (decide.ts) read only these (pull requests: src/previews/events.ts), so a rule is written once for every host.

import { CODE_HOSTS } from '../store/schema/apps.js';

export { CODE_HOSTS };
export type CodeHost = (typeof CODE_HOSTS)[number];

/** A push of a ref. */
export interface PushEvent {
  /** `owner/name` (GitLab: `group/subgroup/name`) of the repository pushed to. */
  repo: string;
  ref: string;
  /** The new head; forty zeros when the ref was deleted. */
  after: string;
  deleted: boolean;
}

/** A finished CI run (GitHub/Gitea `workflow_run`, Gitea `workflow_job`, GitLab `pipeline`). */
export interface CiRunEvent {
  repo: string;
  /** False while queued or running: only a finished run deploys. */
  completed: boolean;
  /** The host's word for where the run is (`action requested`, `status running`), for the answer. */
  state: string;
  /** `success` deploys; anything else (failure, cancelled, skipped) does not. */
  conclusion: string | null;
  branch: string | null;
  sha: string;
  /** What started the run (`push`, `pull_request`, GitLab's `merge_request_event`, ...). */
  trigger: string | null;
  /** The run's head is in another repository than `repo`. */
  fromFork: string | null;
  /** Names and file paths the app's `ci_workflow` may select the run by. */
  names: string[];
  paths: string[];
  /** The event name in answers (`workflow_run`, `pipeline`, ...). */
  kind: string;
  /** Deploys only apps whose `ci_workflow` names it (a single job), never an app that takes any workflow. */
  namedOnly?: boolean;
}
