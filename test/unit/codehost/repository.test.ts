import { describe, expect, it } from 'vitest';
import { builtImage, imageForCommit, imageWithoutTag, repoMatches } from '../../../src/codehost/repository.js';

describe('repoMatches', () => {
  it.each([
    ['https://github.com/acme/site', 'acme/site', true],
    ['https://github.com/acme/site.git', 'acme/site', true],
    ['https://github.com/acme/site/', 'acme/site', true],
    ['file:///srv/git/acme/site.git', 'acme/site', true],
    ['git@github.com:acme/site.git', 'acme/site', true],
    ['https://github.com/Acme/Site', 'ACME/site', true],
    ['https://github.com/acme/site', 'acme/site2', false],
    ['https://github.com/notacme/site', 'acme/site', false],
    ['https://github.com/acme/site', 'site', false],
    [null, 'acme/site', false],
  ])('%s vs %s', (url, name, ok) => {
    expect(repoMatches(url, name)).toBe(ok);
  });
});

describe('image names', () => {
  it.each([
    ['ghcr.io/acme/web:latest', 'ghcr.io/acme/web'],
    ['registry:5000/team/web:1.2', 'registry:5000/team/web'],
    ['registry:5000/team/web', 'registry:5000/team/web'],
    ['web@sha256:abc', 'web'],
    ['web', 'web'],
  ])('%s without its tag is %s', (ref, want) => {
    expect(imageWithoutTag(ref)).toBe(want);
  });

  it('tags the commit image with the full sha', () => {
    expect(imageForCommit('ghcr.io/acme/web:v1', 'a'.repeat(40))).toBe(`ghcr.io/acme/web:${'a'.repeat(40)}`);
    expect(builtImage('site', 'b'.repeat(40))).toBe(`svc-build/site:${'b'.repeat(40)}`);
  });
});
