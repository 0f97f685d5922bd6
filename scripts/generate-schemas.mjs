// Writes schemas/*.schema.json from the zod schemas in src/ (via the build in dist/). Never edit them by hand:
// tests/schemas.test.ts fails when they drift from the code.
import { writeFileSync } from 'node:fs';
import { fileFormats, jsonSchemaText } from '../dist/records/formats.js';

for (const name of Object.keys(fileFormats)) {
  writeFileSync(new URL(`../schemas/${name}`, import.meta.url), jsonSchemaText(name));
  process.stdout.write(`schemas/${name}\n`);
}
