// Keeps the DNS answers the proxy resolves equal to the apps' live addresses in the database. The
// database is the truth (the live address changes in the same write as the switch), the hosts files
// dnsmasq answers from are derived from it and rewritten only when they differ.
import type { Db } from '../../store/db.js';
import { eq } from 'drizzle-orm';
import { apps, appStatus } from '../../store/schema/index.js';
import { desiredDnsRecords } from './routes.js';

export interface DnsSync {
  sync(): Promise<void>;
}

export function createDnsSync(db: Db, write: (records: Record<string, string>) => Promise<void> | void): DnsSync {
  let last: string | undefined;
  let chain: Promise<void> = Promise.resolve();
  const syncOnce = async () => {
    const rows = db.select({ name: apps.name, liveAddress: appStatus.liveAddress }).from(apps).innerJoin(appStatus, eq(appStatus.appId, apps.id)).all();
    const records = desiredDnsRecords(rows);
    const json = JSON.stringify(records);
    if (json === last) return;
    await write(records);
    last = json;
  };
  return {
    // Serialized: two reconcilers switching at once must not write an older view after a newer one.
    sync() {
      chain = chain.then(syncOnce, syncOnce);
      return chain;
    },
  };
}
