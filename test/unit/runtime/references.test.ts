import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../../src/controller/types.js';
import { checkContainerRef, checkImageRef, InvalidReferenceError, isContainerRef, isImageRef } from '../../../src/runtime/references.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('image references (the engine grammar)', () => {
  it.each([
    'web',
    'svc-test/web:v1',
    'library/nginx:1.25-alpine',
    'docker.io/library/nginx:latest',
    'localhost:5000/team/app:v2',
    'registry.example.com:443/a/b/c:tag_1.0',
    'Example.COM/app:v1', // a domain may have capitals; a path may not
    '[::1]:5000/app:v1',
    `nginx@${DIGEST}`,
    `ghcr.io/org/app:v1@${DIGEST}`,
    'a__b/c-d--e.f:TAG.with-Case_1',
    `app:${'x'.repeat(128)}`,
  ])('accepts %s', (ref) => expect(isImageRef(ref)).toBe(true));

  it.each([
    '',
    '-x',
    '../x',
    '../web',
    './web',
    '/web',
    'web/',
    'a//b',
    'UPPER:v1',
    'web:',
    'web:-v1',
    'web:v1 ',
    ' web',
    'we b',
    'wéb:v1',
    'web:v1\u0000',
    'a\u0000b',
    'web\n',
    'a_-b',
    '.web',
    'web@sha256:short',
    `app:${'x'.repeat(129)}`,
    `${'a'.repeat(256)}:v1`,
    'x'.repeat(600),
    'http://registry/app:v1',
    '$(reboot)',
  ])('rejects %j', (ref) => expect(isImageRef(ref)).toBe(false));

  it('stays fast on long near-misses (no catastrophic backtracking)', () => {
    const t0 = performance.now();
    for (const s of ['a.'.repeat(250) + '!', 'a-'.repeat(250) + '!', 'a_'.repeat(250) + 'A', 'a'.repeat(500) + '/']) isImageRef(s);
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it('checkImageRef throws a TerminalError that names the value', () => {
    expect(() => checkImageRef('../web')).toThrow(InvalidReferenceError);
    expect(() => checkImageRef('../web')).toThrow(/"\.\.\/web"/);
    expect(() => checkImageRef('-x')).toThrow(TerminalError);
    expect(checkImageRef('svc-test/web:v1')).toBe('svc-test/web:v1');
  });
});

describe('container names', () => {
  it.each(['svc-web-7', 'a', 'My_Container.1', '/svc-web-7', 'f'.repeat(64)])('accepts %s', (n) => expect(isContainerRef(n)).toBe(true));
  it.each(['', '..', '../x', '/../x', 'a/b', '-x', '.x', '//x', 'wéb', 'a\u0000b', 'a b', 'x'.repeat(256)])('rejects %j', (n) =>
    expect(isContainerRef(n)).toBe(false),
  );
  it('checkContainerRef strips the leading slash inspect prints', () => {
    expect(checkContainerRef('/svc-web-7')).toBe('svc-web-7');
    expect(() => checkContainerRef('../x')).toThrow(InvalidReferenceError);
  });
});
