// Detects a wrong SVC_ENCRYPTION_KEY at start instead of at the first decrypt: a known value sealed with
// the key of the first start is kept in `settings`; if it does not open, every secret in the database is
// unreadable with this key and the daemon must refuse to start rather than generate fresh, mismatched data.
import { eq } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import type { Db } from './db.js';
import { nowIso, services, settings } from './schema/index.js';

export const ENCRYPTION_CHECK_KEY = 'encryption_check';
const PLAINTEXT = 'svc encryption check v1';

export class EncryptionKeyError extends Error {}

const wrongKey = () =>
  new EncryptionKeyError(
    'SVC_ENCRYPTION_KEY does not match the key this database was encrypted with: secrets (service credentials, ' +
      'secret variables) cannot be decrypted. Start with the original key (see the .env of the installation or of the backup).',
  );

/**
 * Verifies that `sealer` opens the stored check value; on the first start (no value yet) it stores one,
 * after checking any credentials already present (a database from before this check existed).
 */
export function verifyEncryptionKey(db: Db, sealer: Sealer): void {
  const row = db.select().from(settings).where(eq(settings.key, ENCRYPTION_CHECK_KEY)).get();
  if (row) {
    let plain: string;
    try {
      plain = sealer.open(row.value);
    } catch {
      throw wrongKey();
    }
    if (plain !== PLAINTEXT) throw wrongKey();
    return;
  }
  const existing = db.select({ sealed: services.credentialsSealed }).from(services).limit(1).get();
  if (existing) {
    try {
      sealer.open(existing.sealed);
    } catch {
      throw wrongKey();
    }
  }
  db.insert(settings).values({ key: ENCRYPTION_CHECK_KEY, value: sealer.seal(PLAINTEXT), updatedAt: nowIso() }).onConflictDoNothing().run();
}
