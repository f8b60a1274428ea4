// Writes docs/manifest.schema.json from the zod schemas (npm run schema:manifest); a unit test checks
// the published file is what the schemas generate, so editors validate exactly what svc accepts.
import { writeFileSync } from 'node:fs';
import { manifestJsonSchema } from '../src/manifests/schema.js';

writeFileSync(new URL('../docs/manifest.schema.json', import.meta.url), JSON.stringify(manifestJsonSchema(), null, 2) + '\n');
