#!/usr/bin/env node
// Bundles the compiled dist/cli.js into bundle/ (the package's bin): one file to load at start-up instead
// of ~330 modules, which halves the cold start (README "Start-up"). Lazily imported parts (HTTP, demo,
// execa, doctor) stay separate chunks, loaded on first use; the TypeScript compiler stays external and
// lazy. bundle/ sits one level below the package root, like dist/, so src/package.ts holds for both.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'bundle');
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
