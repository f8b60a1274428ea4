// Keeps the DNS answers the proxy resolves equal to the apps' live addresses in the database. The
// database is the truth (the live address changes in the same write as the switch), the hosts files
// dnsmasq answers from are derived from it and rewritten only when they differ.
import type { Db } from '../../store/db.js';
import { eq } from 'drizzle-orm';
import { appInstances, apps, appStatus } from '../../store/schema/index.js';
import { desiredDnsRecords } from './routes.js';
import type { DnsRecords } from '../../dns/hosts.js';
import { dataVersion } from '../../store/data-version.js';

export interface DnsSync {
  sync(): Promise<void>;
}

/** The DNS answers the database implies: every app's live replicas' addresses. */
export function dnsRecordsOf(db: Db): DnsRecords {
  const rows = db.select({ id: apps.id, name: apps.name, liveAddress: appStatus.liveAddress }).from(apps).innerJoin(appStatus, eq(appStatus.appId, apps.id)).all();
  const replicas = db.select({ appId: appInstances.appId, address: appInstances.address }).from(appInstances).all();
  return desiredDnsRecords(rows, replicas);
}

export function createDnsSync(db: Db, write: (records: DnsRecords) => Promise<void> | void): DnsSync {
  let last: string | undefined;
  // The proxy pass syncs every second: with nothing written to the database since the last sync, the
  // answers cannot have changed, and the two reads are skipped.
  const version = dataVersion(db);
  let lastVersion: string | undefined;
  let chain: Promise<void> = Promise.resolve();
  const syncOnce = async () => {
    const at = version();
    if (at === lastVersion) return;
    const records = dnsRecordsOf(db);
    const json = JSON.stringify(records);
    if (json !== last) {
      await write(records);
      last = json;
    }
    lastVersion = at;
  };
  return {
    // Serialized: two reconcilers switching at once must not write an older view after a newer one.
    sync() {
      chain = chain.then(syncOnce, syncOnce);
      return chain;
    },
  };
}
