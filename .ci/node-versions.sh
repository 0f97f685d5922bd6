#!/usr/bin/env bash
# Runs the whole suite again on Node 22 and 24 (CI's main run, `npm test`, is on the machine's Node 20).
# Node releases come from the npm package `node`, pinned, installed into the same cache the tests use
# (.tmp/runners/node-<version>, see tests/helpers/runners.ts), never into package.json.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly RELEASES=(22.23.3 24.21.0)

for version in "${RELEASES[@]}"; do
  prefix="$PWD/.tmp/runners/node-$version"
  node_bin="$prefix/node_modules/node/bin/node"
  if [[ ! -f "$prefix/installed" || "$("$node_bin" --version 2>/dev/null)" != "v$version" ]]; then
    rm -rf "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --save-exact "node@$version" >/dev/null
    echo "node@$version" >"$prefix/installed"
  fi
  echo "node-versions: the whole suite on Node $("$node_bin" --version)"
  # PATH first, so every `node` the tests and the server start is this release too.
  # The output-memory bound is checked by the main run; its RSS reading swings with each Node's GC.
  PATH="$(dirname "$node_bin"):$PATH" "$node_bin" node_modules/vitest/vitest.mjs run \
    --testNamePattern '^(?!.*keeps memory bounded)'
  # The idle collections differ by V8 version (src/idle-collection.ts): memory after a storm, here too.
  PATH="$(dirname "$node_bin"):$PATH" "$node_bin" scripts/bench-reliability.mjs --quick --only=fuzz
done
echo "node-versions: the whole suite passed on Node ${RELEASES[*]}"
