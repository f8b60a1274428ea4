// Rules every self-healing reconciler shares (apps and services).

/**
 * Kubelet-style restart backoff: how long to wait before the next restart after `failures` consecutive
 * failed or crashed starts. 10 s doubling, at most 5 min; no wait before the first restart.
 */
export function restartBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(10_000 * 2 ** (failures - 1), 300_000);
}

/** Replaces every secret value in a message (engine errors can echo env values) before it is stored or logged. */
export function redact(message: string, secrets: string[]): string {
  let out = message;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
