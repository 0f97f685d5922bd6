#!/usr/bin/env bash
# Runs the Node-sensitive tests again on Node 22 and 24 (CI's main run, the whole suite, is on the
# machine's Node 20): the runner and its report readers, node --test evaluations, stdio and the demo.
# The whole suite three times would take CI past 20 minutes on two cores.
# Node releases come from the npm package `node`, pinned, installed into the same cache the tests use
# (.tmp/runners/node-<version>, see tests/helpers/runners.ts), never into package.json.
set -euo pipefail
cd "$(dirname "$0")/.."

readonly RELEASES=(22.23.3 24.21.0)
readonly NODE_SENSITIVE=(
  tests/runner
  tests/tools/run-independent-tests.test.ts
  tests/evaluation/trusted-approval-node.test.ts
  tests/stdio.test.ts
  tests/stdio-lifecycle.test.ts
  tests/demo.test.ts
)

for version in "${RELEASES[@]}"; do
  prefix="$PWD/.tmp/runners/node-$version"
  node_bin="$prefix/node_modules/node/bin/node"
  if [[ ! -f "$prefix/installed" || "$("$node_bin" --version 2>/dev/null)" != "v$version" ]]; then
    rm -rf "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --save-exact "node@$version" >/dev/null
    echo "node@$version" >"$prefix/installed"
  fi
  echo "node-versions: Node-sensitive tests on Node $("$node_bin" --version)"
  # PATH first, so every `node` the tests and the server start is this release too.
  # The output-memory bound is checked by the main run; its RSS reading swings with each Node's GC.
  PATH="$(dirname "$node_bin"):$PATH" "$node_bin" node_modules/vitest/vitest.mjs run "${NODE_SENSITIVE[@]}" \
    --testNamePattern '^(?!.*keeps memory bounded)'
done
echo "node-versions: Node-sensitive tests passed on Node ${RELEASES[*]}"
