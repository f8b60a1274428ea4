// The `clone` and `build` steps of a `svc_build` deploy (API.md "Building from source"), run by the app
// reconciler's pipeline between `validate` and `pull`. Each is one reconcile pass and safe to run again
// after a restart: `clone` starts from an empty directory, `build` goes back to `clone` when the checkout
// is gone, and an image already built for the commit is not rebuilt.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Result } from '../controller/types.js';
import type { Config } from '../config.js';
import type { Bus } from '../controller/bus.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Db } from '../store/db.js';
import { updateDeploy } from '../store/deploys.js';
import type { AppRow, DeployRow, EventLevel } from '../store/schema/index.js';
import { builtImage } from '../codehost/repository.js';
import { effectiveHost, tokenTransport, tokenUser } from '../codehost/hosts.js';
import { checkout, execGit, type GitRunner } from './git.js';
import { planBuild, type ProjectType } from './detect.js';
import { displayUrl } from './repo-url.js';
import { OutputCap } from './output.js';

export interface BuildSettings {
  /** Parent of the per-deploy checkouts ($SVC_DATA_DIR/builds). */
  workDir: string;
  images: Config['buildImages'];
  git?: GitRunner;
  /** An installation token for a private repository on the code host, undefined when none applies. */
  tokenFor?(repoUrl: string): Promise<string | undefined>;
  /** The app's own access token (`repo_token`) in clear, undefined when it has none; it wins over tokenFor. */
  repoToken?(app: AppRow): string | undefined;
}

/** What the steps act through: the deploy row's store and viewers, and the engine's image build. */
export interface StepDeps {
  db: Db;
  bus: Bus;
  runtime: Pick<Runtime, 'hasImage' | 'build'>;
}

/** How a step reports: deploy events, and ending the deploy failed at a step. */
export interface StepReport {
  event(step: string, message: string, level?: EventLevel): void;
  fail(step: string, message: string): Result;
}

/** True when this deploy builds from source (a svc_build app, not a rollback or an explicitly named image). */
export const buildsFromSource = (app: Pick<AppRow, 'name' | 'buildMode'>, deploy: Pick<DeployRow, 'trigger' | 'imageRef'>) =>
  app.buildMode === 'svc_build' && deploy.trigger !== 'rollback' && (deploy.imageRef === null || deploy.imageRef.startsWith(`svc-build/${app.name}:`));

export const checkoutDir = (s: BuildSettings, app: string, deployId: number) => join(s.workDir, `${app}-${deployId}`);

/**
 * Rethrows when the daemon is stopping: the step is not failed, it runs again from its start at the next
 * start (the checkout directory is removed either way).
 */
function throwIfStopping(signal: AbortSignal | undefined, err: unknown) {
  if (signal?.aborted) throw err;
}

export async function cloneStep(deps: StepDeps, s: BuildSettings, app: AppRow, deploy: DeployRow, r: StepReport, signal?: AbortSignal): Promise<Result> {
  const dir = checkoutDir(s, app.name, deploy.id);
  await rm(dir, { recursive: true, force: true });
  if (!app.repoUrl) return r.fail('clone', 'the app has no repo_url to build from');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const what = deploy.commitSha ? `commit ${deploy.commitSha}` : `the head of branch ${app.branch}`;
  r.event('clone', `cloning ${displayUrl(app.repoUrl)} at ${what}`);
  let sha: string;
  try {
    const transport = tokenTransport(app.repoUrl);
    const own = transport === 'skip' ? undefined : s.repoToken?.(app);
    if (own && transport === 'refuse') throw new Error('repo_token is sent only to an https:// repo_url (or http:// on a loopback address)');
    const token = own ?? (await s.tokenFor?.(app.repoUrl));
    const user = own ? tokenUser(effectiveHost(app)) : undefined;
    sha = await checkout({ url: app.repoUrl, branch: app.branch, commit: deploy.commitSha, dir, token, tokenUser: user, signal }, s.git ?? execGit);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throwIfStopping(signal, err);
    return r.fail('clone', err instanceof Error ? err.message : String(err));
  }
  updateDeploy(deps.db, deps.bus, deploy.id, { step: 'build', commitSha: sha, imageRef: builtImage(app.name, sha) });
  r.event('clone', `checked out ${sha}`);
  return { requeueAfterMs: 0 };
}

export async function buildStep(deps: StepDeps, s: BuildSettings, app: AppRow, deploy: DeployRow, r: StepReport, signal?: AbortSignal): Promise<Result> {
  const dir = checkoutDir(s, app.name, deploy.id);
  if (!existsSync(dir) || !deploy.imageRef) {
    // Interrupted between the steps (restart, cleanup): fetch again.
    updateDeploy(deps.db, deps.bus, deploy.id, { step: 'clone' });
    return { requeueAfterMs: 0 };
  }
  try {
    const plan = planBuild(await readdir(dir), app.projectType as ProjectType, s.images);
    if (plan.kind === 'error') return r.fail('build', plan.message);
    r.event('build', plan.kind === 'dockerfile' ? plan.reason : `provider ${plan.provider}: ${plan.reason}; port ${plan.port}`);
    const tag = deploy.imageRef;
    if (await deps.runtime.hasImage(tag)) {
      r.event('build', `image ${tag} was already built for this commit; not rebuilt`);
    } else {
      if (plan.kind === 'provider') await writeFile(join(dir, 'Dockerfile'), plan.dockerfile);
      const cap = new OutputCap((line) => r.event('build', line));
      try {
        await deps.runtime.build(dir, tag, (line) => cap.push(line), signal);
      } catch (err) {
        cap.end();
        throwIfStopping(signal, err);
        const why = err instanceof Error ? err.message : String(err);
        return r.fail('build', `build failed: ${why}${cap.tail().length ? `\nlast output:\n${cap.tail().join('\n')}` : ''}`);
      }
      cap.end();
      r.event('build', `built ${tag}`);
    }
    updateDeploy(deps.db, deps.bus, deploy.id, { step: 'pull', buildPort: plan.kind === 'provider' ? plan.port : null });
    return { requeueAfterMs: 0 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
