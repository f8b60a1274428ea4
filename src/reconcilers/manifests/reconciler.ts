// The manifest sources as a reconciler (DESIGN.md rule 13): `manifests:dir` reads the watched directory
// and applies it; `manifests:git` fetches the repository and applies the checked-out commit, then asks to
// be called again after the poll interval (the poll is a requeue, not a timer of its own). Both apply
// through src/manifests/apply.ts and record the outcome in `manifest_applies`, so a restart resumes from
// the recorded revision. Re-applying unchanged content is cheap and changes nothing, except what was
// changed by hand since (drift), which it sets back.
import type { Reconciler, Result } from '../../controller/types.js';
import { applyManifests, type ApplyDeps } from '../../manifests/apply.js';
import { readManifestDir } from '../../manifests/dir.js';
import type { GitCheckout } from '../../manifests/git.js';
import { memoizedParser, type ManifestError } from '../../manifests/parse.js';
import { getSourceRecord, writeSourceRecord } from '../../manifests/record.js';
import type { ManifestSource } from '../../manifests/plan.js';

export interface ManifestsReconcilerDeps extends ApplyDeps {
  dir: string;
  pruneServices: boolean;
  /** Starts watching the directory once it exists (idempotent). */
  ensureWatch(): void;
  git?: {
    location: string;
    intervalMs: number;
    sync(): Promise<GitCheckout>;
  };
}

export function createManifestsReconciler(deps: ManifestsReconcilerDeps): Reconciler {
  const { db, log } = deps;
  const parsers = { dir: memoizedParser(), git: memoizedParser(), api: memoizedParser() };

  /** Records a source-level failure and keeps everything the source applied before. */
  const fail = (source: ManifestSource, location: string, message: string) => {
    const prev = getSourceRecord(db, source);
    const errors: ManifestError[] = [{ file: '', document: -1, path: '', message }];
    writeSourceRecord(db, { source, location, revision: prev?.revision ?? null, resources: prev?.resources ?? [], errors }, false);
  };

  function applyDir(source: ManifestSource, location: string, dir: string, revision?: string) {
    const read = readManifestDir(dir);
    if (!read.exists) {
      // The directory never existed and never applied: nothing to say. Otherwise the source is unreadable: keep all.
      if (source === 'git' || getSourceRecord(db, source)) fail(source, location, `directory ${dir} does not exist; nothing applied`);
      return;
    }
    const parser = parsers[source];
    const result = applyManifests(deps, { source, location, files: read.files, revision, prune: true, pruneServices: deps.pruneServices, readErrors: read.errors, parse: parser.parse });
    parser.endPass();
    if (result.errors.length > 0) log.warn('manifest errors', { source, errors: result.errors.length, first: result.errors[0].message });
  }

  async function reconcile(name: string): Promise<Result> {
    if (name === 'dir') {
      applyDir('dir', deps.dir, deps.dir);
      deps.ensureWatch();
      return {};
    }
    if (name === 'git' && deps.git) {
      let checkout: GitCheckout;
      try {
        checkout = await deps.git.sync();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log.warn('manifest repository unreachable; keeping the last applied state', { error: message });
        fail('git', deps.git.location, message);
        return { requeueAfterMs: deps.git.intervalMs };
      }
      applyDir('git', deps.git.location, checkout.dir, checkout.revision);
      return { requeueAfterMs: deps.git.intervalMs };
    }
    return {};
  }

  return {
    kind: 'manifests',
    reconcile,
    listNames: () => (deps.git ? ['dir', 'git'] : ['dir']),
  };
}
