/**
 * The installed package's root (package.json, agents/, examples/). This module sits one level below it
 * both as compiled (dist/) and bundled (bundle/), and in tests (src/): keep it at the top of src/.
 */
export const PACKAGE_ROOT = new URL('../', import.meta.url);
