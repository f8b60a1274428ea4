// The preview sweep (issue 20) as the queue key `previews:sweep`: at start and then every hour, previews
// whose app turned previews off (while the daemon was down) or whose last commit is older than `ttl_days`
// are removed through the previews command (src/desired), never by writing rows here. An hour is
// fine-grained enough for a TTL counted in days.
import type { Clock } from '../../controller/clock.js';
import { periodic } from '../../controller/periodic.js';
import type { Reconciler } from '../../controller/types.js';
import type { CommandCtx } from '../../desired/context.js';
import { expirePreviews } from '../../desired/previews.js';

export const PREVIEW_SWEEP_MS = 60 * 60_000;

/** `previews:sweep`: a failed sweep is logged and tried again at the next hour, as a timer did before. */
export function createPreviewSweep(ctx: CommandCtx, clock?: Clock): Reconciler {
  return periodic({
    kind: 'previews',
    name: 'sweep',
    periodMs: PREVIEW_SWEEP_MS,
    clock,
    pass() {
      try {
        const gone = expirePreviews(ctx, 'schedule');
        if (gone.length > 0) ctx.log.info('expired previews removed', { apps: gone });
      } catch (err) {
        ctx.log.error('preview expiry failed', { error: err instanceof Error ? err.message : String(err) });
      }
    },
  });
}
