// What a copy needs loaded, loaded before the first copy: the AWS SDK (~40 MiB of a daemon's memory, so
// only once a backup target exists: at daemon start or when one is created) and, for a passphrase, its
// scrypt header (one derivation per process, headerFor). A copy that comes first finds the same work
// under way and waits for it; nothing here is needed for correctness, only for the first copy's time and
// memory window (bench:offsite).
import { headerFor, type AgeKey } from './age.js';
import { s3Sdk } from './sdk.js';

let warming: Promise<void> | undefined;
let warm = false;

export function warmOffsite(age: AgeKey | undefined): Promise<void> {
  warming ??= (async () => {
    s3Sdk();
    if (age) await headerFor(age); // loads the age library too
    warm = true;
  })().catch(() => {
    warming = undefined; // a failed derivation is tried again by the next copy (and warm)
  });
  return warming;
}

/** Whether the SDK and the header are loaded (benchmarks wait on it before measuring a first copy). */
export const isOffsiteWarm = (): boolean => warm;
