// Every key of the vendored Compose schema has a rule in keys.ts (used, ignored with a warning, refused), so a
// newer schema cannot bring a key that svc silently drops; and the rules name no key the schema lacks.
import { describe, expect, it } from 'vitest';
import { SERVICE_KEYS, TOP_LEVEL_KEYS } from '../../../src/stacks/compose/keys.js';
import { composeSpec } from '../../../src/stacks/compose/schema.js';

describe('Compose key rules', () => {
  it('classify every service key of the schema, and only those', () => {
    const schemaKeys = Object.keys(composeSpec.definitions.service.properties ?? {}).sort();
    expect(Object.keys(SERVICE_KEYS).sort()).toEqual(schemaKeys);
  });

  it('classify every top-level key of the schema, and only those', () => {
    expect(Object.keys(TOP_LEVEL_KEYS).sort()).toEqual(Object.keys(composeSpec.properties).sort());
  });
});
