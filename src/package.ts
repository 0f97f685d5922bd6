import { readFileSync } from 'node:fs';

/**
 * The installed package's root (package.json, agents/, examples/). This module sits one level below it
 * both as compiled (dist/) and bundled (bundle/), and in tests (src/): keep it at the top of src/.
 */
export const PACKAGE_ROOT = new URL('../', import.meta.url);

/** The CLI entry point, beside this module in dist/ and bundle/ alike (the demo starts it). */
export const CLI_SCRIPT = new URL('./cli.js', import.meta.url);

/** From the package's package.json. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as {
    version: string;
  }
).version;
