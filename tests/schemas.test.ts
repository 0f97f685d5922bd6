import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fileFormats, jsonSchemaText } from '../src/records/formats.js';

describe('schemas/', () => {
  it('matches the zod schemas (run `npm run schemas` after changing a format)', () => {
    for (const name of Object.keys(fileFormats)) {
      expect(readFileSync(new URL(`../schemas/${name}`, import.meta.url), 'utf8'), name).toBe(
        jsonSchemaText(name),
      );
    }
  });

  it('holds no schema that the code no longer generates', () => {
    expect(readdirSync(new URL('../schemas/', import.meta.url)).sort()).toEqual(
      Object.keys(fileFormats).sort(),
    );
  });
});
