// Checkouts (`<data>/builds/<app>-<deploy>`) live from a deploy's `clone` step to the end of its `build`
// step, which removes them. One outlives that only when its deploy ended in between (superseded by a newer
// deploy, or failed after a crash mid-clone); at start every checkout whose deploy is not at one of those
// two steps is removed, so the data directory does not fill with sources nobody will build.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { eq, inArray } from 'drizzle-orm';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import { apps, deploys } from '../store/schema/index.js';

/** Pure: the entries of the builds directory that no deploy at `clone` or `build` owns. */
export function staleCheckouts(entries: string[], building: { app: string; deployId: number }[]): string[] {
  const live = new Set(building.map((b) => `${b.app}-${b.deployId}`));
  return entries.filter((e) => !live.has(e));
}

export async function sweepCheckouts(db: Db, workDir: string, log: Logger): Promise<void> {
  const entries = await readdir(workDir).catch(() => [] as string[]);
  if (entries.length === 0) return;
  const building = db
    .select({ app: apps.name, deployId: deploys.id })
    .from(deploys)
    .innerJoin(apps, eq(apps.id, deploys.appId))
    .where(inArray(deploys.step, ['clone', 'build']))
    .all();
  for (const name of staleCheckouts(entries, building)) {
    await rm(join(workDir, name), { recursive: true, force: true });
    log.info('removed a checkout no deploy will build', { checkout: name });
  }
}
