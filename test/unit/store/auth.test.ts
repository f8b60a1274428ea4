import { describe, it, expect } from 'vitest';
import { hashPassword, verifyPassword } from '../../../src/auth/password.js';
import { createLoginLimiter } from '../../../src/auth/login-limiter.js';

describe('password hashing', () => {
  it('verifies the right password only, with the parameters read from the stored string', async () => {
    const cheap = await hashPassword('the password', { ln: 10, r: 8, p: 1 });
    expect(cheap).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$/);
    expect(await verifyPassword('the password', cheap)).toBe(true);
    expect(await verifyPassword('the passwore', cheap)).toBe(false);
    expect(await hashPassword('the password', { ln: 10, r: 8, p: 1 })).not.toBe(cheap); // salted
  });

  it('refuses malformed or absurd stored values instead of throwing or allocating', async () => {
    for (const stored of ['', 'plain', '$scrypt$ln=40,r=8,p=1$c2FsdA==$aGFzaA==', '$scrypt$ln=10,r=8,p=1$c2FsdA==$c2hvcnQ=']) {
      expect(await verifyPassword('x', stored)).toBe(false);
    }
  });
});

describe('login limiter', () => {
  it('blocks an address after max failures until the oldest counted one leaves the window; others unaffected', () => {
    let now = 0;
    const limiter = createLoginLimiter(() => now, { windowMs: 1000, max: 3 });
    for (const at of [0, 100, 200]) {
      now = at;
      expect(limiter.blockedFor('a')).toBe(0);
      limiter.fail('a');
    }
    now = 300;
    expect(limiter.blockedFor('a')).toBe(700);
    expect(limiter.blockedFor('b')).toBe(0);
    now = 1000;
    expect(limiter.blockedFor('a')).toBe(0);
    limiter.fail('a'); // failures at 100, 200, 1000: blocked until 100 leaves
    expect(limiter.blockedFor('a')).toBe(100);
  });
});
