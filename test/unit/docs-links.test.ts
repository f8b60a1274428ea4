// The docs a newcomer reads hold together: every relative link in README.md and docs/**/*.md names a file
// or folder the repository ships, and every docs/ path a comment in src/, test/ or bench/ names exists
// (docs/design.md was retired into docs/architecture.md and docs/decisions/; a stale pointer fails here).
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '../..');

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : filesUnder(path, ext);
    return ext.test(e.name) ? [path] : [];
  });
}

/** Relative link targets of a markdown text, without their #fragment (code spans and fences left out). */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const targets = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#')).map((t) => t.split('#')[0]!);
}

describe('relativeLinks', () => {
  it('keeps relative targets and drops URLs, anchors and code', () => {
    const md = '[a](docs/x.md) [b](https://e.org) [c](#top) [d](../y.md#part) `[e](nope.md)`\n```\n[f](no.md)\n```';
    expect(relativeLinks(md)).toEqual(['docs/x.md', '../y.md']);
  });
});

describe('docs links', () => {
  const docs = ['README.md', ...filesUnder('docs', /\.md$/)];

  it.each(docs)('%s links only to files that exist', (file) => {
    const missing = relativeLinks(readFileSync(join(root, file), 'utf8')).filter((t) => !existsSync(join(root, dirname(file), t)));
    expect(missing).toEqual([]);
  });

  it('every docs/ path named in src/, test/ and bench/ exists', () => {
    const code = ['src', 'test', 'bench'].flatMap((d) => filesUnder(d, /\.tsx?$/)).filter((f) => f !== 'test/unit/docs-links.test.ts');
    const missing = code.flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/\bdocs\/[\w./-]*\w\.md\b/g)]
        .map((m) => m[0])
        .filter((p) => !existsSync(join(root, p)))
        .map((p) => `${relative(root, join(root, file))}: ${p}`),
    );
    expect(missing).toEqual([]);
  });
});
