// Secret generation for service credentials, apart from catalog.ts so type files never import the
// catalog (which imports them).
import { randomBytes } from 'node:crypto';

/**
 * A URL-safe random password: 32 random bytes as base64url (256 bits, no characters to escape), never
 * starting with `-` so no command line can mistake it for an option.
 */
export function randomPassword(bytes = 32): string {
  for (;;) {
    const p = randomBytes(bytes).toString('base64url');
    if (/^[A-Za-z0-9]/.test(p)) return p;
  }
}

/** Hex of `bytes` random bytes (Garage's rpc_secret is 32 bytes hex). */
export const randomHex = (bytes = 32) => randomBytes(bytes).toString('hex');
