import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from '../../../src/codehost/signature.js';

const body = Buffer.from('{"zen":"Keep it logically awesome."}');

describe('webhook signature', () => {
  it('matches the HMAC-SHA256 example of GitHub\'s documentation', () => {
    // docs.github.com "Validating webhook deliveries": secret "It's a Secret to Everybody", payload "Hello, World!"
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
  });

  it.each([
    ['the right signature', signBody('s3cret', body), true],
    ['upper-case hex', signBody('s3cret', body).replace(/[a-f]/g, (x) => x.toUpperCase()).replace('SHA256', 'sha256'), true],
    ['no header', undefined, false],
    ['empty header', '', false],
    ['another secret', signBody('other', body), false],
    ['sha1 prefix', signBody('s3cret', body).replace('sha256=', 'sha1='), false],
    ['truncated', signBody('s3cret', body).slice(0, 40), false],
    ['extra characters', signBody('s3cret', body) + '00', false],
    ['not hex', 'sha256=' + 'z'.repeat(64), false],
  ])('%s', (_what, header, ok) => {
    expect(verifySignature('s3cret', body, header)).toBe(ok);
  });

  it('covers every byte: one changed byte fails', () => {
    const header = signBody('s3cret', body);
    const changed = Buffer.from(body);
    changed[5] ^= 1;
    expect(verifySignature('s3cret', changed, header)).toBe(false);
  });
});
