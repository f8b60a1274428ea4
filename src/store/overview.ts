// Reads for overview pages (the web UI's dashboard): the newest deploy of every app and the images of the
// live deploys, each in one query whatever the number of apps, so the dashboard stays fast at 1,000 apps.
import { inArray, sql } from 'drizzle-orm';
import type { Db } from './db.js';
import { deploys, type DeployRow } from './schema/index.js';

/** app id -> its newest deploy (any status). */
export function newestDeployByApp(db: Db): Map<number, DeployRow> {
  const rows = db
    .select()
    .from(deploys)
    .where(sql`${deploys.id} in (select max(id) from deploys group by app_id)`)
    .all();
  return new Map(rows.map((d) => [d.appId, d]));
}

/** deploy id -> image of the given deploys (the apps' live ones). */
export function deployImages(db: Db, ids: number[]): Map<number, string | null> {
  const out = new Map<number, string | null>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    for (const d of db.select({ id: deploys.id, imageRef: deploys.imageRef }).from(deploys).where(inArray(deploys.id, chunk)).all()) {
      out.set(d.id, d.imageRef);
    }
  }
  return out;
}
