// The code-host setup command (API.md "Code host", the manifest flow's last step): checks the single-use
// state the setup started with, exchanges the platform's code for the app's credentials, writes them where
// a restart finds them (the private key as a mode-600 file in the data directory, the rest in `.env`) and
// makes them live at once. Secrets never appear in an answer or a log.
import { join } from 'node:path';
import { invalid } from '../errors.js';
import type { CodehostClient } from '../codehost/client.js';
import type { CredentialsHolder } from '../codehost/credentials.js';
import { updateEnvFile, writePrivateFile } from '../codehost/env-file.js';
import { takeManifestState } from '../store/codehost.js';
import type { CommandCtx } from './context.js';

/** The app's private key in the data directory (backup/create-archive.ts keeps it in archives). */
export const KEY_FILE = 'codehost-app.pem';

const TOKEN = /^[A-Za-z0-9_-]{1,200}$/;

/** What the browser is told: done, or why not (a sentence for the settings page). */
export type CodehostSetupOutcome = { registered: true } | { registered: false; error: string };

/**
 * Completes the setup for `userId` (the session's user, who started it). An unknown, used or expired
 * state is a 400 `invalid_state` that changes nothing; a missing code or a failed exchange is an outcome
 * (the platform's page redirects the browser, so the user reads it on /settings), also changing nothing.
 */
export async function completeCodehostSetup(
  ctx: Pick<CommandCtx, 'db' | 'config' | 'log' | 'now'>,
  host: { codehost: CredentialsHolder; client: CodehostClient },
  userId: number,
  input: { code: string; state: string },
): Promise<CodehostSetupOutcome> {
  if (!TOKEN.test(input.state) || !takeManifestState(ctx.db, input.state, userId, ctx.now())) {
    throw invalid('unknown, used or expired setup state: start the setup again from /settings', undefined, 'invalid_state');
  }
  if (!TOKEN.test(input.code)) return { registered: false, error: 'the platform sent no valid code' };
  let conv;
  try {
    conv = await host.client.convertManifest(input.code);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    ctx.log.warn('code-host app conversion failed', { error: why });
    return { registered: false, error: `the code exchange failed: ${why}` };
  }
  const keyPath = join(ctx.config.dataDir, KEY_FILE);
  writePrivateFile(keyPath, conv.pem);
  updateEnvFile(ctx.config.envFile, {
    SVC_CODEHOST_APP_ID: conv.id,
    SVC_CODEHOST_APP_SLUG: conv.slug,
    SVC_CODEHOST_APP_CLIENT_ID: conv.client_id,
    SVC_CODEHOST_APP_CLIENT_SECRET: conv.client_secret,
    SVC_CODEHOST_WEBHOOK_SECRET: conv.webhook_secret,
    SVC_CODEHOST_APP_PRIVATE_KEY: keyPath,
  });
  host.codehost.set({
    appId: conv.id,
    appSlug: conv.slug,
    clientId: conv.client_id,
    clientSecret: conv.client_secret,
    webhookSecret: conv.webhook_secret,
    privateKeyPath: keyPath,
  });
  ctx.log.info('code-host app registered', { app_id: conv.id, slug: conv.slug });
  return { registered: true };
}
