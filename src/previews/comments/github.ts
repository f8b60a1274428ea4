// GitHub pull-request comments (issue 20) through the GitHub App: the installation that covers the
// repository, its (cached) installation token, then the issue-comment endpoints of src/codehost/client.ts.
import type { CodehostClient } from '../../codehost/client.js';
import type { CommentClient } from './port.js';

export type ReportClient = Pick<CodehostClient, 'repoInstallation' | 'installationToken' | 'createIssueComment' | 'updateIssueComment'>;

export function githubComments(client: ReportClient, repository: string): CommentClient {
  async function tokenFor(): Promise<string> {
    const installation = await client.repoInstallation(repository);
    if (installation === undefined) throw new Error(`the code-host app is not installed on ${repository}`);
    return client.installationToken(installation);
  }
  return {
    async post(number, body) {
      return client.createIssueComment(await tokenFor(), repository, number, body);
    },
    async edit(_number, id, body) {
      return client.updateIssueComment(await tokenFor(), repository, id, body);
    },
  };
}
