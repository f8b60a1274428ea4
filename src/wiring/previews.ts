// The preview part of the composition root (issue 20): once at start and then every hour, previews whose
// app turned previews off (while the daemon was down) or whose last commit is older than `ttl_days` are
// removed through the previews command. An hour is fine-grained enough for a TTL counted in days.
import type { CommandCtx } from '../desired/context.js';
import { expirePreviews } from '../desired/previews.js';

export const PREVIEW_SWEEP_MS = 60 * 60_000;

export function wirePreviews(ctx: CommandCtx): { stop(): void } {
  const sweep = () => {
    try {
      const gone = expirePreviews(ctx, 'schedule');
      if (gone.length > 0) ctx.log.info('expired previews removed', { apps: gone });
    } catch (err) {
      ctx.log.error('preview expiry failed', { error: err instanceof Error ? err.message : String(err) });
    }
  };
  sweep();
  const timer = setInterval(sweep, PREVIEW_SWEEP_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
