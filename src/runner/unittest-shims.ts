import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shellQuote } from './chain.js';
import { SCRIPT_END_HOOK_SOURCE } from './script-end-watch.js';
import { UNITTEST_RECORDING_SOURCE } from './unittest-reporter.js';
import type { ReportChannel } from './report/types.js';

/**
 * unittest behind a wrapper coachgate cannot see into (make, a package script, `toolchain.test`):
 * `python`/`python3`/`coverage` shims first on PATH. A shim that sees `-m unittest` (also
 * `python -m coverage run … -m unittest`, `coverage run … -m unittest`) puts a `sitecustomize` on
 * PYTHONPATH for that one process, then execs the real program with the arguments as written;
 * anything else is exec'd untouched. The hook lets unittest's own runner run (same output, options
 * and exit code) with a recording result class, and hands on to the project's own `sitecustomize`.
 * See docs/runners.md.
 */
export interface UnittestShims {
  /** The directory to put first on PATH. */
  bin: string;
  channel: ReportChannel;
}

/**
 * Every coachgate run's shims are in a directory of this name: a run inside another's (coachgate's
 * own tests run by coachgate) finds the real program past both, and records into its own report.
 */
const SHIMS_DIRECTORY = 'coachgate-unittest-shims';

/** Programs a wrapper may start unittest with; each is shimmed only when the run's PATH has it. */
const SHIMMED_NAME = /^(?:python(?:3(?:\.\d+)?)?|coverage(?:3|-3(?:\.\d+)?)?)$/;

export function unittestShims(reportDirectory: string): UnittestShims {
  const file = path.join(reportDirectory, 'wrapped-unittest.xml');
  return {
    bin: path.join(reportDirectory, SHIMS_DIRECTORY),
    channel: {
      file,
      format: 'junit',
      source: "coachgate's unittest recorder via python/coverage shims first on PATH",
    },
  };
}

/** Where a plain script's early ends are written, in a run that watches them. */
export function scriptEndFile(reportDirectory: string): string {
  return path.join(reportDirectory, 'script-end.jsonl');
}

/**
 * Writes the shims (for the names `searchPath` has) and the hooks they load. With `watchScripts`
 * (a trusted run), a plain Python script they start is watched for an early end too
 * (src/runner/script-end-watch.ts).
 */
export async function writeUnittestShims(
  reportDirectory: string,
  searchPath = '',
  watchScripts = false,
): Promise<void> {
  const { bin, channel } = unittestShims(reportDirectory);
  const hook = path.join(reportDirectory, 'coachgate-unittest-hook');
  await mkdir(bin, { recursive: true });
  await mkdir(hook, { recursive: true });
  await writeFile(path.join(hook, 'sitecustomize.py'), SITECUSTOMIZE);
  await writeFile(path.join(hook, HOOK_FILE), HOOK_SOURCE);
  await writeFile(path.join(hook, SCRIPT_HOOK_FILE), SCRIPT_END_HOOK_SOURCE);
  const shim = shimScript(hook, channel.file, watchScripts ? scriptEndFile(reportDirectory) : '');
  for (const name of await namesOnPath(searchPath))
    await writeFile(path.join(bin, name), shim, { mode: 0o755 });
}

/**
 * Only names that exist: a shim for a missing `python3.9` would answer `command -v python3.9` and
 * change what a wrapper probing for interpreters (tox, nox) finds.
 */
async function namesOnPath(searchPath: string): Promise<string[]> {
  const names = new Set<string>();
  for (const directory of searchPath.split(path.delimiter).filter(Boolean)) {
    const entries = await readdir(directory).catch(() => [] as string[]);
    for (const entry of entries) if (SHIMMED_NAME.test(entry)) names.add(entry);
  }
  return [...names].sort();
}

const HOOK_FILE = 'coachgate_unittest_hook.py';
const SCRIPT_HOOK_FILE = 'coachgate_script_end_hook.py';

/**
 * Compiled under a `<…>` name: coverage.py traces no such file, so a `coverage run` reports the
 * project's files only, as without coachgate.
 */
const HOOK_SOURCE = String.raw`${UNITTEST_RECORDING_SOURCE}
RecordingMixin.report_path = REPORT_PATH
run_tests = unittest.TestProgram.runTests

def recording_run_tests(self):
    runner = self.testRunner or unittest.TextTestRunner
    # A runner instance, or a class of another family, is the project's own: left alone.
    if isinstance(runner, type) and issubclass(runner, unittest.TextTestRunner):
        result = type(runner.resultclass.__name__, (RecordingMixin, runner.resultclass), {})
        self.testRunner = type(runner.__name__, (runner,), {'resultclass': result})
    return run_tests(self)

unittest.TestProgram.runTests = recording_run_tests
`;

/**
 * Python 2 syntax on purpose: a `python` that is Python 2 imports it too, and is left alone. It
 * removes every trace of coachgate from the environment first, so the tests' own child processes
 * (a `python -m unittest` a test starts) neither record nor see the shims.
 */
const SITECUSTOMIZE = String.raw`# coachgate's unittest hook, for one process (docs/runners.md).
import os, sys

def _coachgate_unittest():
    here = os.path.dirname(os.path.abspath(__file__))
    report = os.environ.pop('COACHGATE_UNITTEST_REPORT', None)
    script_end = os.environ.pop('COACHGATE_SCRIPT_END', None)
    original = os.environ.pop('COACHGATE_UNITTEST_PYTHONPATH', None)
    if original is None:
        os.environ.pop('PYTHONPATH', None)
    else:
        os.environ['PYTHONPATH'] = original
    entries = os.environ.get('PATH', '').split(os.pathsep)
    shims = os.sep + '${SHIMS_DIRECTORY}'
    os.environ['PATH'] = os.pathsep.join([e for e in entries if not e.endswith(shims)])
    sys.path[:] = [entry for entry in sys.path if entry != here]
    # The project's own sitecustomize, which this one hid on sys.path, still runs.
    this = sys.modules.pop('sitecustomize')
    try:
        import sitecustomize
    except ImportError as error:
        if getattr(error, 'name', 'sitecustomize') != 'sitecustomize':
            raise
        sys.modules['sitecustomize'] = this
    if report and sys.version_info >= (3, 6):
        with open(os.path.join(here, '${HOOK_FILE}')) as source:
            code = compile(source.read(), '<coachgate unittest recorder>', 'exec')
        exec(code, {'REPORT_PATH': report})
    elif script_end and sys.version_info >= (3, 8):
        with open(os.path.join(here, '${SCRIPT_HOOK_FILE}')) as source:
            code = compile(source.read(), '<coachgate script end watch>', 'exec')
        exec(code, {'END_PATH': script_end})

_coachgate_unittest()
`;

/**
 * The shim: finds the real program on PATH past itself, and adds the hook only when the arguments
 * run unittest as a module (python's options, or coverage's, before it).
 */
function shimScript(hook: string, report: string, scriptEnd: string): string {
  return `#!/bin/sh
# coachgate: \`-m unittest\` (also under coverage run) records its tests; the rest runs as is.
name=\${0##*/}
real=
set -f
saved=$IFS
IFS=:
for dir in $PATH; do
  case $dir in '' | */${SHIMS_DIRECTORY}) continue ;; esac
  if [ -f "$dir/$name" ] && [ -x "$dir/$name" ]; then
    real=$dir/$name
    break
  fi
done
IFS=$saved
set +f
if [ -z "$real" ]; then
  echo "$name: not found" >&2
  exit 127
fi
coverage_runs_unittest() {
  [ "$1" = run ] || return 1
  shift
  while [ $# -gt 1 ]; do
    case $1 in
      -m | --module) [ "$2" = unittest ]; return ;;
      --concurrency | --context | --data-file | --include | --omit | --rcfile | --source | --debug)
        shift 2 ;;
      -*) shift ;;
      *) return 1 ;;
    esac
  done
  return 1
}
python_runs_unittest() {
  while [ $# -gt 0 ]; do
    case $1 in
      -m)
        [ "$2" = unittest ] && return 0
        [ "$2" = coverage ] || return 1
        shift 2
        coverage_runs_unittest "$@"
        return ;;
      -munittest) return 0 ;;
      -W | -X | --check-hash-based-pycs) [ $# -gt 1 ] || return 1; shift 2 ;;
      -c* | -m* | - | --) return 1 ;;
      -*) shift ;;
      *) return 1 ;;
    esac
  done
  return 1
}
python_runs_script() {
  while [ $# -gt 0 ]; do
    case $1 in
      -W | -X | --check-hash-based-pycs) [ $# -gt 1 ] || return 1; shift 2 ;;
      -c* | -m* | - | --) return 1 ;;
      -*) shift ;;
      *) [ -f "$1" ]; return ;;
    esac
  done
  return 1
}
case $name in
  coverage*) check=coverage_runs_unittest ;;
  *) check=python_runs_unittest ;;
esac
hooked=
if $check "$@"; then
  COACHGATE_UNITTEST_REPORT=${shellQuote(report)}
  export COACHGATE_UNITTEST_REPORT
  hooked=1
elif [ -n ${shellQuote(scriptEnd)} ] && [ "$check" = python_runs_unittest ] && python_runs_script "$@"; then
  COACHGATE_SCRIPT_END=${shellQuote(scriptEnd)}
  export COACHGATE_SCRIPT_END
  hooked=1
fi
if [ -n "$hooked" ]; then
  if [ -n "\${PYTHONPATH+set}" ]; then
    COACHGATE_UNITTEST_PYTHONPATH=$PYTHONPATH
    export COACHGATE_UNITTEST_PYTHONPATH
  fi
  PYTHONPATH=${shellQuote(hook)}\${PYTHONPATH:+:$PYTHONPATH}
  export PYTHONPATH
fi
exec "$real" "$@"
`;
}
