// The pull-request reporter of previews (issue 20, src/previews/reporter.ts) wired to the daemon: the
// code-host client of the configured GitHub App, the sealer that opens an app's repo_token (GitLab, Gitea,
// Forgejo), and the address port-mode previews are reached at
// (SVC_PUBLIC_URL's host, else this host's first external address, as in notification links).
import { createCodehostClient } from '../codehost/client.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import type { Config } from '../config.js';
import type { Bus } from '../controller/bus.js';
import { accessUrl } from '../presenters/app-json.js';
import type { Logger } from '../log.js';
import { messageBaseUrl } from '../notify/base-url.js';
import { createPreviewReporter, type PreviewReporter } from '../previews/reporter.js';
import type { Db } from '../store/db.js';
import type { Sealer } from '../crypto.js';

export function wirePreviewReports(d: { db: Db; bus: Bus; log: Logger; config: Config; codehost: CredentialsHolder; sealer: Sealer; port: number }): PreviewReporter {
  const hostname = new URL(messageBaseUrl(d.config.publicUrl, d.config.host, d.port)).hostname;
  const reporter = createPreviewReporter({
    db: d.db,
    bus: d.bus,
    log: d.log,
    client: createCodehostClient({ apiUrl: d.config.codehost.apiUrl, creds: d.codehost }),
    configured: () => {
      const c = d.codehost.get();
      return !!(c.appId && c.privateKeyPath);
    },
    repoToken: (app) => (app.repoTokenSealed ? d.sealer.open(app.repoTokenSealed) : undefined),
    urlOf: (app) => accessUrl(app, hostname),
  });
  reporter.start();
  return reporter;
}
