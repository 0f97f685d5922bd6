#!/usr/bin/env node
// Bundles the compiled dist/cli.js into bundle/ (the package's bin): one file to load at start-up instead
// of ~330 modules, which halves the cold start (README "Start-up"). Lazily imported parts (HTTP, demo,
// execa, doctor) stay separate chunks, loaded on first use; the TypeScript compiler stays external and
// lazy. bundle/ sits one level below the package root, like dist/, so src/package.ts holds for both.
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'bundle');

/** The newest modification time among `files` and every file under `directory`. */
function newest(directory, files) {
  const times = files.map((file) => statSync(file).mtimeMs);
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) times.push(statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  return Math.max(...times);
}
// Nothing to do when the bundle is newer than everything it is made of (tsc's incremental build of
// an unchanged tree writes nothing): a bundle in use elsewhere (CI runs the Node 22/24 tests beside
// npm run test:all, which builds first) is left in place.
const made = (() => {
  try {
    return statSync(path.join(outdir, 'cli.js')).mtimeMs;
  } catch {
    return -Infinity;
  }
})();
if (made > newest(path.join(root, 'dist'), [fileURLToPath(import.meta.url)])) process.exit(0);
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, 'dist', 'cli.js')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['typescript'],
  // Bundled CommonJS dependencies call require(); ESM output has none unless given one.
  banner: {
    js: "import { createRequire as bundleRequire } from 'node:module';\nconst require = bundleRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
