// What a new user reads must hold on its own (issue 18, section 5): docs/api.md refers to no document the
// repository does not ship and names service containers as svc names them; the example manifests are valid
// documents whose images exist publicly (no `ghcr.io/example/...` placeholders) and whose links resolve.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseManifestFile } from '../../../src/manifests/parse.js';
import { isImageRef } from '../../../src/runtime/references.js';
import { serviceContainerName } from '../../../src/catalog/catalog.js';

const root = join(import.meta.dirname, '../../..');
const api = readFileSync(join(root, 'docs/api.md'), 'utf8');

describe('docs/api.md', () => {
  it('is self-contained: no SPEC.md or API.md to look up', () => {
    expect(api.match(/.{0,40}\b(SPEC|API)\.md.{0,40}/g) ?? []).toEqual([]);
  });

  it('names service containers as svc does (<instance>-svc-<name>)', () => {
    const record = /Record: `id, name, type, version, image_ref, status, container_name \(([^)]*)\)/.exec(api)?.[1] ?? '';
    expect(record).toMatch(/^<instance>-svc-<name>/);
    expect(serviceContainerName('svc-k3x9q2', 'db')).toBe('svc-k3x9q2-svc-db');
    expect(record).toContain('svc-k3x9q2-svc-db');
  });
});

describe('example manifests', () => {
  const files = [
    ...readdirSync(join(root, 'examples/manifests')).filter((f) => f.endsWith('.yaml')).map((f) => join('examples/manifests', f)),
    'examples/web-with-postgres.yaml',
  ];
  const parsed = files.map((f) => ({ ...parseManifestFile(f, readFileSync(join(root, f), 'utf8')), file: f }));

  it.each(parsed.map((p) => [p.file, p] as const))('%s is valid', (_, p) => {
    expect(p.errors).toEqual([]);
    expect(p.docs.length).toBeGreaterThan(0);
  });

  it('name images a fresh host can pull (no placeholders) and link only services they declare', () => {
    const docs = parsed.flatMap((p) => p.docs.map((d) => ({ ...d, dir: p.file.split('/').slice(0, -1).join('/') })));
    for (const d of docs) {
      if (d.doc.kind !== 'App') continue;
      const image = d.doc.spec.image_ref!;
      expect(isImageRef(image), image).toBe(true);
      expect(image, `${d.file}: a placeholder image`).not.toMatch(/(^|[./])example([./:]|$)/);
      expect(d.doc.spec.access_mode ?? 'port', `${d.file}: a domain needs DNS a fresh host lacks`).toBe('port');
      const services = docs.filter((o) => o.doc.kind === 'Service' && o.dir === d.dir && (d.dir !== 'examples' || o.file === d.file)).map((o) => o.doc.metadata.name);
      for (const link of d.doc.spec.services ?? []) expect(services, `${d.file} links ${link.name}`).toContain(link.name);
    }
  });
});
