import { describe, it, expect } from 'vitest';
import { redact, restartBackoffMs } from '../../../src/reconcilers/restart.js';

describe('restartBackoffMs', () => {
  it.each([[0, 0], [1, 10_000], [2, 20_000], [3, 40_000], [4, 80_000], [5, 160_000], [6, 300_000], [7, 300_000], [30, 300_000]])(
    'after %i failures: %i ms',
    (n, ms) => {
      expect(restartBackoffMs(n)).toBe(ms);
    },
  );
});

describe('redact', () => {
  it('replaces every secret occurrence, ignoring trivially short values', () => {
    expect(redact('bad env PASSWORD=s3cr3t-v4lue in s3cr3t-v4lue', ['s3cr3t-v4lue', 'ab'])).toBe('bad env PASSWORD=[redacted] in [redacted]');
    expect(redact('auth failed for s3cr3tpw and s3cr3tpw', ['s3cr3tpw', 'svc'])).toBe('auth failed for [redacted] and [redacted]');
  });
});
