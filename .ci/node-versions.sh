#!/usr/bin/env bash
# Node 22 and 24 for CI (the main run, `npm run test:all`, is on the machine's Node 20). Node
# releases come from the npm package `node`, pinned, installed into the cache the tests read
# (.tmp/runners/node-<version>, see tests/helpers/runners.ts), never into package.json.
#   .ci/node-versions.sh install   only install them (the node --test report tests then cover them too)
#   .ci/node-versions.sh           install, then run the Node-dependent tests on each
set -euo pipefail
cd "$(dirname "$0")/.."

readonly RELEASES=(22.23.3 24.21.0)

node_bin() { echo "$PWD/.tmp/runners/node-$1/node_modules/node/bin/node"; }

install_release() {
  local version=$1 prefix="$PWD/.tmp/runners/node-$1"
  if [[ ! -f "$prefix/installed" || "$("$(node_bin "$version")" --version 2>/dev/null)" != "v$version" ]]; then
    rm -rf "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --save-exact "node@$version" >/dev/null
    echo "node@$version" >"$prefix/installed"
  fi
}

for version in "${RELEASES[@]}"; do install_release "$version"; done
[[ "${1:-}" == install ]] && { echo "node-versions: installed Node ${RELEASES[*]}"; exit 0; }

# PATH first, so every `node` the tests and the server start is this release too.
on_release() {
  local node_bin
  node_bin="$(node_bin "$1")"
  shift
  PATH="$(dirname "$node_bin"):$PATH" "$node_bin" "$@"
}

# Only what depends on the server's Node runs again, both projects in one vitest run: the server
# itself over stdio and HTTP, its start-up imports, the process-tree clean-up and output capture, the
# node --test report reader (node's reporters differ by release) and the loaded-file recorder (a
# loader hook in-process on 22 and 24, the loader's reads on 20). Left to the main run: what reads
# text or runs other programs (pytest, the JS runners and their reports, classifiers, summaries),
# whose output does not depend on the server's Node, and report-node-versions, which runs every
# release by its own binary whatever Node runs vitest. The releases run side by side, two workers
# each (the four of the main run), so one's last slow file does not hold the cores idle; each
# output is printed whole once both have ended.
logs="$(mktemp -d)"
pids=()
for version in "${RELEASES[@]}"; do
  on_release "$version" node_modules/vitest/vitest.mjs run --maxWorkers=2 \
    --project unit --project integration \
    tests/stdio tests/http tests/startup-imports tests/tool-contracts tests/runner/process-tree \
    tests/runner/output-capture tests/runner/report-node-test tests/runner/node-loaded-files \
    >"$logs/$version.log" 2>&1 &
  pids+=("$!")
done
failed=()
for i in "${!RELEASES[@]}"; do
  echo "node-versions: the Node-dependent tests on Node ${RELEASES[$i]}"
  wait "${pids[$i]}" || failed+=("${RELEASES[$i]}")
  cat "$logs/${RELEASES[$i]}.log"
done
if ((${#failed[@]})); then
  echo "node-versions: the Node-dependent tests failed on Node ${failed[*]}" >&2
  exit 1
fi
# The idle collections differ by V8 version (src/server/idle-collection.ts): memory after a storm,
# here too (the figure is each server's RSS once it settles). Both releases side by side: the check
# mostly waits for its server to settle.
fuzz=()
for version in "${RELEASES[@]}"; do
  on_release "$version" scripts/bench-reliability.mjs --quick --only=fuzz \
    >"$logs/fuzz-$version.log" 2>&1 &
  fuzz+=("$!")
done
for i in "${!RELEASES[@]}"; do
  wait "${fuzz[$i]}" || failed+=("${RELEASES[$i]}")
  cat "$logs/fuzz-${RELEASES[$i]}.log"
done
rm -rf "$logs"
if ((${#failed[@]})); then
  echo "node-versions: the memory check failed on Node ${failed[*]}" >&2
  exit 1
fi
echo "node-versions: passed on Node ${RELEASES[*]}"
