// `svc restore FILE` with no daemon running: disaster recovery on a fresh host (API.md "CLI").
// The CLI (src/cli) owns argument parsing and the "is a daemon answering?" check; this module owns the
// restore itself. Filled in by the backups work (issue 8).

export interface OfflineRestoreOptions {
  /** The `.tar.gz` archive to restore. */
  archivePath: string;
  /** `SVC_DATA_DIR` to restore into (created when missing). */
  dataDir: string;
  /** Where the archive's `.env` is written (mode 600): `.env` in the working directory. */
  envFile: string;
}

export interface OfflineRestoreResult {
  /** Human lines the CLI prints, one per thing restored. */
  summary: string[];
}

/** Restores an archive into a data directory with the daemon stopped. Throws an Error with a user-facing sentence. */
export async function restoreOffline(_opts: OfflineRestoreOptions): Promise<OfflineRestoreResult> {
  throw new Error('offline restore is not implemented yet');
}
