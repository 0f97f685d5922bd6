import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CACHED_PACKAGES, installedPackage } from '../helpers/runners.js';

/**
 * Every npm package the suite installs on first use resolves to exactly its pinned version (npm on
 * an old Node can quietly pick an older release, and a cached install may be stale). CI runs it
 * beside the linters, so the installs are done before the tests that use them start.
 */
describe('pinned runners', () => {
  it.each(CACHED_PACKAGES.map(([name, version]) => [name, version] as const))(
    '%s@%s is installed at that version',
    (name, version) => {
      const prefix = installedPackage(name, version);
      const manifest = path.join(prefix, 'node_modules', name, 'package.json');
      expect((JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version).toBe(
        version,
      );
    },
    300_000,
  );
});
