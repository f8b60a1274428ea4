// One service's dump out of a full-state archive (`dumps/<service>.sql`), re-compressed into a service
// backup's file, without unpacking anything else: the archive is read once as a stream and every other
// entry skipped. Resolves false when the archive holds no dump of that service.
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { ReadEntry } from 'tar';

export async function extractServiceDump(archive: string, service: string, destGz: string): Promise<boolean> {
  const { Parser } = await import('tar');
  const want = `dumps/${service}.sql`;
  let copied: Promise<void> | undefined;
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      if (!copied && entry.type === 'File' && entry.path.replace(/^\.\//, '') === want) {
        copied = pipeline(entry, createGzip({ level: 1 }), createWriteStream(destGz, { mode: 0o600 }));
      } else entry.resume();
    },
  });
  try {
    await pipeline(createReadStream(archive), createGunzip(), parser);
    if (copied) await copied;
  } catch (err) {
    await rm(destGz, { force: true });
    throw err;
  }
  return copied !== undefined;
}
