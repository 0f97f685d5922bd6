#!/usr/bin/env bash
# Real-client check: drives the built coachgate server over stdio with the official MCP Inspector CLI.
# Assumes `npm ci && npm run build` already ran. The Inspector 2.x needs Node >= 22.19, so it runs on a Node 22
# that the npm package `node` ships, installed with the Inspector into a cache prefix (never into package.json);
# the server itself runs on the machine's `node`, as users run it.
# COACHGATE_SERVER_CMD overrides the server command (debugging only); `--root <dir>` is appended to it.
#   .ci/inspector-check.sh install   only install the Inspector and its Node
set -euo pipefail
cd "$(dirname "$0")/.."

readonly INSPECTOR_VERSION=2.12.0
readonly NODE22_VERSION=22.23.3
readonly PREFIX="${INSPECTOR_PREFIX:-${HOME:-/tmp}/.cache/coachgate-inspector}"
readonly LOCK_DIR="$PWD/.ci/inspector"
readonly NODE22="$PREFIX/node_modules/node/bin/node"
readonly INSPECTOR="$PREFIX/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
read -r -a SERVER_CMD <<<"${COACHGATE_SERVER_CMD:-node bundle/cli.js}"

fail() {
  echo "inspector: FAILED: $*" >&2
  exit 1
}

installed_versions_match() {
  [[ -x "$NODE22" && -f "$INSPECTOR" ]] || return 1
  cmp -s "$LOCK_DIR/package-lock.json" "$PREFIX/package-lock.json" || return 1
  [[ "$("$NODE22" --version)" == "v$NODE22_VERSION" ]] || return 1
  [[ "$(node -p 'require(process.argv[1]).version' "$PREFIX/node_modules/@modelcontextprotocol/inspector/package.json")" == "$INSPECTOR_VERSION" ]]
}

# The whole dependency tree is locked in .ci/inspector/package-lock.json, so the check cannot drift.
install_inspector() {
  mkdir -p "$PREFIX"
  rm -rf "$PREFIX/node_modules"
  cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$PREFIX/"
  local log="$PREFIX/install.log" started=$SECONDS
  if ! npm ci --prefix "$PREFIX" --no-audit --no-fund >"$log" 2>&1; then
    cat "$log" >&2
    fail "npm ci of $LOCK_DIR (node@$NODE22_VERSION + @modelcontextprotocol/inspector@$INSPECTOR_VERSION) into $PREFIX"
  fi
  installed_versions_match || { cat "$log" >&2; fail "installed versions in $PREFIX are not node $NODE22_VERSION + inspector $INSPECTOR_VERSION"; }
  echo "inspector: installed into $PREFIX in $((SECONDS - started))s"
}

if installed_versions_match; then
  echo "inspector: reusing $PREFIX"
else
  install_inspector
fi
# `install` only installs (CI does it while the build runs: the download waits on the network).
[[ "${1:-}" == install ]] && exit 0
echo "inspector: Inspector $("$NODE22" "$INSPECTOR" --version) on Node $("$NODE22" --version); server on Node $(node --version): ${SERVER_CMD[*]}"
if [[ -z "${COACHGATE_SERVER_CMD:-}" && ! -f bundle/cli.js ]]; then
  fail "bundle/cli.js is missing: run 'npm ci && npm run build' first"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/coachgate-inspector.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
# Keep the Inspector's OAuth/secret store away from the user's home.
export MCP_STORAGE_DIR="$WORK/inspector-storage"
export MCP_INSPECTOR_OAUTH_STATE_PATH="$MCP_STORAGE_DIR/oauth.json"

FIXTURE="$WORK/repo"
mkdir -p "$FIXTURE/.guardkit/tasks"
cat >"$FIXTURE/.guardkit/tasks/TASK-INS-001.md" <<'MD'
---
id: TASK-INS-001
title: Inspector smoke task
status: in_progress
---
## Acceptance Criteria
- [ ] AC-001: the greeting says hello
MD
git -C "$FIXTURE" init -q -b main
git -C "$FIXTURE" add .
git -C "$FIXTURE" -c user.name=ci -c user.email=ci@example.invalid -c commit.gpgsign=false commit -q -m "task fixture"

# Runs one Inspector CLI call; its JSON result lands in $WORK/<name>.json, its stderr (and the server's) in .err.
# Under --cli, everything before `--` is the server command, everything after it the Inspector's own options.
inspect() {
  local name=$1 status=0
  shift
  timeout 120 "$NODE22" "$INSPECTOR" --cli "${SERVER_CMD[@]}" --root "$WORK" -- --format json "$@" \
    >"$WORK/$name.json" 2>"$WORK/$name.err" || status=$?
  if ((status != 0)); then
    cat "$WORK/$name.err" "$WORK/$name.json" >&2
    fail "$name: the Inspector exited $status (1 usage/connection, 4 unreachable, 5 tool error, 124 timeout)"
  fi
}

# Asserts over a result file with a JavaScript expression of `result`; prints the reason when it is false.
expect_json() {
  local name=$1 expression=$2 description=$3
  node - "$WORK/$name.json" "$expression" <<'JS' || fail "$name: expected $description; got $(cat "$WORK/$name.json")"
const [file, expression] = process.argv.slice(2);
const { result } = JSON.parse(require('node:fs').readFileSync(file, 'utf8'));
let holds = false;
try {
  holds = new Function('result', `return (${expression});`)(result) === true;
} catch {}
process.exit(holds ? 0 : 1);
JS
}

# --strict makes the Inspector lint every tool schema for portability and list its findings.
inspect tools-list --method tools/list --strict
expect_json tools-list \
  "['load_task', 'record_player_report', 'read_task_work_results', 'verify_quality_gates', 'run_independent_tests', 'check_test_integrity', 'validate_requirements', 'record_verdict', 'detect_stall', 'task_status', 'parse_validator_verdict', 'check_graph_cycles', 'worktree_start', 'worktree_preserve', 'worktree_finish'].every((name) => result.tools.some((tool) => tool.name === name && tool.outputSchema))" \
  "tools/list to name all 15 coachgate tools, each with an outputSchema"
echo "inspector: ok tools/list names all 15 tools, each with an outputSchema"
findings="$(node -p 'JSON.stringify(JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).schemaFindings ?? [])' "$WORK/tools-list.json")"
[[ "$findings" == "[]" ]] || fail "tools/list --strict: schema portability findings: $findings"
echo "inspector: ok tools/list --strict: 0 schema portability findings"

inspect load-task --method tools/call --tool-name load_task \
  --tool-args-json "$(node -p 'JSON.stringify({ worktree: process.argv[1], task_id: "TASK-INS-001" })' "$FIXTURE")"
expect_json load-task \
  "result.isError !== true && result.structuredContent.title === 'Inspector smoke task' && result.structuredContent.acceptance_criteria.length === 1 && result.structuredContent.acceptance_criteria[0].id === 'AC-001' && result.content.some((block) => block.type === 'text' && block.text.includes('Inspector smoke task'))" \
  "load_task to return title 'Inspector smoke task' with exactly one acceptance criterion AC-001"
echo "inspector: ok tools/call load_task TASK-INS-001 → title 'Inspector smoke task', 1 acceptance criterion (AC-001)"

echo "inspector: 3 checks passed"
