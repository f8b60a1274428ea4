// Which comment client reports a preview (issue 20): by the preview row's host. GitHub through the
// configured GitHub App; GitLab, Gitea and Forgejo with the parent app's own repo_token, against the
// origin of its repo_url (https, or http on loopback: where a clone would send that token too).
import { tokenTransport } from '../../codehost/hosts.js';
import { giteaComments } from './gitea.js';
import { githubComments, type ReportClient } from './github.js';
import { gitlabComments } from './gitlab.js';
import type { CommentClient } from './port.js';

export interface ChooseDeps {
  github: ReportClient;
  /** True when a GitHub App is configured. */
  githubConfigured: () => boolean;
  fetch?: typeof fetch;
}

/** The parent app's side of it: where its repository is, and its repo_token opened (undefined: none). */
export interface ParentRepo {
  repoUrl: string | null;
  token: () => string | undefined;
}

/** The client for `host`/`repository`, or undefined when nobody can report there (no app, no token). */
export function commentClientFor(d: ChooseDeps, host: string, repository: string, parent: ParentRepo | undefined): CommentClient | undefined {
  if (host === 'github') return d.githubConfigured() ? githubComments(d.github, repository) : undefined;
  if (host !== 'gitlab' && host !== 'gitea' && host !== 'forgejo') return undefined;
  if (!parent?.repoUrl || tokenTransport(parent.repoUrl) !== 'send') return undefined;
  const token = parent.token();
  if (!token) return undefined;
  const origin = new URL(parent.repoUrl).origin;
  const o = { origin, repository, token, fetch: d.fetch };
  return host === 'gitlab' ? gitlabComments(o) : giteaComments(o);
}
