// The value grammars of a Compose file: interpolation, env files, shell words, durations, sizes (tables).
import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../../../src/stacks/compose/dotenv.js';
import { interpolateString, interpolateTree, type Interpolation } from '../../../src/stacks/compose/interpolate.js';
import { shellWords } from '../../../src/stacks/compose/shell-words.js';
import { bytes, cpus, durationMs } from '../../../src/stacks/compose/units.js';

const ctx = (variables: Record<string, string> = { SET: 'value', EMPTY: '', PORT: '8080' }): Interpolation => ({ variables, unset: new Set() });

describe('interpolation', () => {
  it.each([
    ['${SET}', 'value'],
    ['$SET', 'value'],
    ['$SET-suffix', 'value-suffix'],
    ['${SET}x', 'valuex'],
    ['${UNSET:-default}', 'default'],
    ['${EMPTY:-default}', 'default'],
    ['${EMPTY-default}', ''],
    ['${UNSET-default}', 'default'],
    ['${SET:-default}', 'value'],
    ['${SET:+alt}', 'alt'],
    ['${EMPTY:+alt}', ''],
    ['${EMPTY+alt}', 'alt'],
    ['${UNSET+alt}', ''],
    ['${UNSET:-${SET}}', 'value'],
    ['${UNSET:-${ALSO:-deep}}', 'deep'],
    ['${UNSET:-a b:c}', 'a b:c'],
    ['$$SET', '$SET'],
    ['$${SET}', '${SET}'],
    ['a $ b', 'a $ b'],
    ['cost: 5$', 'cost: 5$'],
    ['$1', '$1'],
    ['http://h:${PORT}/x', 'http://h:8080/x'],
    ['${SET:?must be set}', 'value'],
    ['${EMPTY?fine when empty}', ''],
  ])('%s -> %s', (text, want) => {
    expect(interpolateString(text, ctx())).toBe(want);
  });

  it.each([
    ['${UNSET:?the key is needed}', /UNSET.*the key is needed/],
    ['${EMPTY:?must not be empty}', /EMPTY.*must not be empty/],
    ['${UNSET?}', /UNSET/],
    ['${SET', /no closing brace/],
    ['${}', /does not start with a variable name/],
    ['${1X}', /does not start with a variable name/],
    ['${SET/a/b}', /unexpected/],
  ])('%s is an error', (text, message) => {
    expect(() => interpolateString(text, ctx())).toThrow(message);
  });

  it('substitutes an empty string for an unset variable and remembers its name', () => {
    const c = ctx();
    expect(interpolateString('a${MISSING}b$OTHER', c)).toBe('ab');
    expect([...c.unset].sort()).toEqual(['MISSING', 'OTHER']);
  });

  it('interpolates values, never keys, and collects errors with their path', () => {
    const errors: { path: (string | number)[]; message: string }[] = [];
    const out = interpolateTree({ services: { web: { image: 'x:${SET}', labels: { '${SET}': '${SET}' }, ports: ['${PORT}:80', 8], command: '${NOPE:?needed}' } } }, ctx(), errors);
    expect(out).toEqual({ services: { web: { image: 'x:value', labels: { '${SET}': 'value' }, ports: ['8080:80', 8], command: '${NOPE:?needed}' } } });
    expect(errors.map((e) => e.path)).toEqual([['services', 'web', 'command']]);
  });
});

describe('env files', () => {
  it('reads comments, export, quotes, escapes, inline comments, interpolation and bare names', () => {
    const text = [
      '# a comment',
      '',
      'A=1',
      'export B=two words ',
      "C='single $SET ${X}'",
      'D="double\\nline $SET"',
      'E=unquoted # a comment',
      'F=${A}-$SET',
      'SET',
      'MISSING',
      'G="multi',
      'line"',
      'H=',
      'I=a=b',
    ].join('\n');
    expect(parseDotenv(text, ctx())).toEqual({ A: '1', B: 'two words', C: 'single $SET ${X}', D: 'double\nline value', E: 'unquoted', F: '1-value', SET: 'value', G: 'multi\nline', H: '', I: 'a=b' });
  });

  it('refuses a line that is not KEY=VALUE and an unclosed quote', () => {
    expect(() => parseDotenv('=x', ctx())).toThrow(/line 1/);
    expect(() => parseDotenv('A="open', ctx())).toThrow(/unclosed/);
    expect(() => parseDotenv("A='open", ctx())).toThrow(/unclosed/);
  });
});

describe('shell words (command and entrypoint strings)', () => {
  it.each([
    ['npm start', ['npm', 'start']],
    ['  a   b  ', ['a', 'b']],
    [`sh -c "echo hi && sleep 1"`, ['sh', '-c', 'echo hi && sleep 1']],
    [`echo 'it''s'`, ['echo', 'its']],
    [`echo 'a "b"'`, ['echo', 'a "b"']],
    [`echo "a \\"b\\" \\x"`, ['echo', 'a "b" \\x']],
    ['echo a\\ b', ['echo', 'a b']],
    [`echo ""`, ['echo', '']],
    ['--flag=$HOME', ['--flag=$HOME']],
    ['', []],
  ])('%s', (line, want) => {
    expect(shellWords(line)).toEqual(want);
  });

  it.each([['echo a && echo b'], ['a | b'], ['a > f'], ['a; b'], [`echo "open`], ['end\\']])('%s is refused', (line) => {
    expect(() => shellWords(line)).toThrow();
  });
});

describe('units', () => {
  it.each([
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['500ms', 500],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['1h2m3s4ms', 3_723_004],
    ['100us', 0],
    ['0', 0],
    [30, 30_000],
    ['45', 45_000],
  ])('duration %s = %d ms', (v, ms) => {
    expect(durationMs(v)).toBe(ms);
  });
  it.each([['10'.concat('x')], ['s'], ['1 m'], [''], [-1], [true]])('duration %s is not one', (v) => {
    expect(durationMs(v)).toBeUndefined();
  });

  it.each([
    ['512m', 512 * 1024 ** 2],
    ['512M', 512 * 1024 ** 2],
    ['1g', 1024 ** 3],
    ['1gb', 1024 ** 3],
    ['2048k', 2048 * 1024],
    ['300', 300],
    ['2b', 2],
    ['1.5g', 1.5 * 1024 ** 3],
    [1048576, 1048576],
  ])('size %s = %d bytes', (v, n) => {
    expect(bytes(v)).toBe(n);
  });
  it.each([['12q'], ['m'], ['-1m'], [1.5], ['']])('size %s is not one', (v) => {
    expect(bytes(v)).toBeUndefined();
  });

  it.each([
    [0.5, 0.5],
    ['1.5', 1.5],
    [2, 2],
    ['0', undefined],
    ['x', undefined],
  ])('cpus %s = %s', (v, n) => {
    expect(cpus(v)).toBe(n);
  });
});
