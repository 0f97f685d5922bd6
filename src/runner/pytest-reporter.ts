import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CALL_RECORDER_SOURCE } from './call-recorder.js';
import { CASE_VALUES_SOURCE } from './case-values.js';
import { EQUALITY_WATCH_SOURCE } from './equality-watch.js';
import { ORACLE_WATCH_SOURCE } from './oracle-watch.js';
import { PYTHON_HARNESS_SOURCE } from './python-harness.js';
import { PYTHON_PROCESS_END_SOURCE } from './process-end-watch.js';
import { PYTHON_OTHER_ORDER_SOURCE } from './other-order.js';
import { PYTHON_REPEAT_SOURCE } from './repeat-in-harness.js';

/**
 * A `python -m pytest` stand-in that also records pytest's own reports as JSON lines, through a
 * plugin object handed to `pytest.main`: same arguments, same console output, same exit code, no
 * environment change. It costs a fraction of `--junitxml` (no XML tree built in the child, none
 * parsed in the server). Lines are flushed after each test, so a killed run leaves the finished
 * tests' lines (and at most one partial line, which the parser leaves out).
 * Messages are the ones the JUnit path shows: pytest's `E   ` lines, else the whole report text; a
 * skip's reason. The test harness (unittest's assertions, pytest's helpers, the builtins) is read
 * before anything is imported and after each test: a replaced one is reported once, after the test
 * it changed in, and becomes an error case (src/runner/report/pytest-jsonl.ts). A call that ends the
 * process is reported before it ends it, with the project's frame that made it and the test that ran
 * (src/runner/process-end-watch.ts). Each parametrized case's values are listed once collected
 * (src/runner/case-values.ts). The session's last line lists the files of the modules it imported.
 * In a trusted run the server asks for, the calls the tests make into the Player's changed files are
 * recorded too (src/runner/call-recorder.ts), the tests that may show the Player's change run a
 * second time (src/runner/repeat-in-harness.ts), its passing equalities decided by their types
 * are compared again as plain values (src/runner/equality-watch.ts), and the verdicts the tests
 * ask of the Player's changed functions are asked of the base's copies too
 * (src/runner/oracle-watch.ts).
 */
const REPORTER_SOURCE = String.raw`
import json, os, re, sys, time
from json.encoder import encode_basestring_ascii as json_string
from operator import is_ as _is

MESSAGE_LIMIT = 2000
ERROR_LINE = re.compile(r'^E\s')

def failure_message(text):
    text = text.strip()
    error_lines = [line[1:].strip() for line in text.split('\n') if ERROR_LINE.match(line)]
    return ('\n'.join(error_lines) or text)[:MESSAGE_LIMIT]

def skip_message(longrepr):
    if not isinstance(longrepr, tuple):
        return failure_message(str(longrepr))
    filename, lineno, reason = longrepr
    reason = reason[len('Skipped: '):] if reason.startswith('Skipped: ') else reason
    return (reason or '%s:%s: ' % (filename, lineno))[:MESSAGE_LIMIT]

PASSED_LINE = '{"event": "test", "nodeid": %s, "when": "%s", "outcome": "passed"}\n'

${PYTHON_HARNESS_SOURCE}
${PYTHON_PROCESS_END_SOURCE}
${CALL_RECORDER_SOURCE}
${ORACLE_WATCH_SOURCE}
${EQUALITY_WATCH_SOURCE}
${PYTHON_REPEAT_SOURCE}
${CASE_VALUES_SOURCE}
${PYTHON_OTHER_ORDER_SOURCE}
LOADED_LIMIT = 20000

def real_files(names):
    # os.path.realpath of each name, resolving each directory once (a session's 400 modules sit in
    # about 50 directories: 17 ms one by one, 5 ms so). A name that is itself a link is resolved
    # whole. Directories are resolved afresh at each call: a test may re-point a link between two.
    directories = {}
    for name in names:
        head, tail = os.path.split(name)
        real_head = directories.get(head)
        if real_head is None:
            real_head = directories[head] = os.path.realpath(head)
        real = os.path.join(real_head, tail)
        yield os.path.realpath(real) if os.path.islink(real) else real

def environment_prefixes():
    # Where the interpreter keeps its own and its installed packages' files, as it reports them: its
    # prefixes (a virtualenv's own, inside the worktree or not, and the one it was made from) and its
    # site directories.
    import site, sysconfig
    places = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    places.update(sysconfig.get_paths().get(name) or '' for name in ('purelib', 'platlib'))
    places.update(getattr(site, 'getsitepackages', list)())
    places.add(getattr(site, 'getusersitepackages', str)())
    # A virtualenv made at the project's own root (python -m venv .) would make the project its
    # environment: a prefix holding the working directory is not one.
    here = os.path.realpath(os.getcwd()) + os.sep
    places = (os.path.realpath(place) + os.sep for place in places if place)
    return tuple(place for place in places if not here.startswith(place))

def loaded_files():
    # The files of every module the session imported, but the interpreter's own and installed
    # packages': the server keeps those inside the worktree, to know which changed files the tests
    # ran (an evaluation must not approve code the trusted runs never took).
    prefixes = environment_prefixes()
    names = [getattr(module, '__file__', None) for module in list(sys.modules.values())]
    files = set(real for real in real_files(name for name in names if isinstance(name, str))
                if not real.startswith(prefixes) and os.sep + 'site-packages' + os.sep not in real)
    return sorted(files)[:LOADED_LIMIT]

OWN_FILE = os.path.realpath(__file__)

def registrar_file(frame, environment, own_file):
    # The file whose code asked pluggy to register a plugin: the nearest frame outside the
    # environment (pytest, pluggy, the standard library, installed packages) and this reporter. A
    # frame of code made at run time (exec of a string, a frozen module) has no file of its own:
    # the frame that made it answers for it.
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith('<'):
            real = os.path.realpath(name)
            if real != own_file and not real.startswith(environment):
                return real
        frame = frame.f_back
    return None

def defining_file(thing, getattr=getattr, isinstance=isinstance, type=type):
    # A module's file, or the file of the module that defines an object's class (a function's
    # own code file).
    import types
    code = getattr(getattr(thing, '__func__', thing), '__code__', None)
    if isinstance(getattr(code, 'co_filename', None), str):
        return code.co_filename
    if not isinstance(thing, types.ModuleType):
        owner = thing if isinstance(thing, type) else type(thing)
        thing = sys.modules.get(getattr(owner, '__module__', None) or '')
    name = getattr(thing, '__file__', None)
    return name if isinstance(name, str) else None

def plugin_files(manager, plugins, fresh, registrars, environment, getattr=getattr,
                 isinstance=isinstance):
    # The files that make each fresh plugin, the environment's left out (pytest registering its
    # own plugins, from a virtualenv in the worktree or not): the plugin's module, or its class's,
    # and the file whose code registered it. A plugin made of the environment's types and
    # registered by the environment's code (a namespace whose hooks are the product's, handed to
    # a timer that registers it) is known by the files of the hooks pluggy will call.
    # Modules a conftest declares in pytest_plugins are the test setup's own.
    import types
    declared = set()
    for plugin in plugins:
        module = isinstance(plugin, types.ModuleType)
        names = getattr(plugin, 'pytest_plugins', ()) if module else ()
        declared.update([names] if isinstance(names, str) else names)
    outside = lambda names: set(real for real in real_files(name for name in names if name)
                                if not real.startswith(environment))
    found = set()
    for plugin in fresh:
        if manager.get_name(plugin) in declared:
            continue
        registrar = registrars.get(id(plugin), (None, None))
        made = outside([defining_file(plugin), registrar[1] if registrar[0] is plugin else None])
        if not made:
            hooks = [impl.function for caller in manager.get_hookcallers(plugin) or ()
                     for impl in caller.get_hookimpls() if impl.plugin is plugin]
            made = outside(map(defining_file, hooks))
        found |= made
    return found

def bytecode_source(pyc):
    # The source a bytecode file stands for, as Python places it: beside it under __pycache__, or
    # under sys.pycache_prefix at the source's own path; None for any other place.
    directory, name = os.path.split(pyc)
    stem = name.split('.', 1)[0] + '.py'
    if os.path.basename(directory) == '__pycache__':
        return os.path.join(os.path.dirname(directory), stem)
    prefix = sys.pycache_prefix and os.path.realpath(sys.pycache_prefix) + os.sep
    if prefix and pyc.startswith(prefix):
        return os.path.join(os.sep, directory[len(prefix):], stem)
    return None

def started_files(tree, environment):
    # The tree's files that ran before this reporter did: Python's start-up ran them (site's
    # sitecustomize and usercustomize, wherever they sit on the import path, and what a .pth line
    # imports), which is before any watcher of coachgate's can start. Read from the modules already
    # imported, so whatever the name or the route; the environment's own (a virtualenv's
    # _virtualenv.pth, inside the worktree or not) are left out.
    names = [getattr(module, '__file__', None) for module in list(sys.modules.values())]
    files = real_files(name for name in names if isinstance(name, str))
    return sorted(set(real for real in files
                      if real.startswith(tree) and not real.startswith(environment)))

class OpenWatch:
    # What the process opens, through Python's own audit event for each file it opens (the import
    # system's open_code, open() and os.open, pytest's reading of its rewritten modules), watched
    # from before pytest or anything of the tree is imported:
    # - bytecode: the .pyc files read that were written once the process started (the inode's
    #   change time, which no process sets back), outside the cache the run was given (the prefix
    #   at start: the server's, read-only to every run but the baseline's), standing for a source
    #   of the tree or the environment. Honest runs write no bytecode (PYTHONDONTWRITEBYTECODE):
    #   whatever is read so was written by a process of the run.
    # - read: the tree's files that the tree's own code read, each with its reader (the nearest
    #   frame outside the environment and this reporter, a file of the tree): a module run with
    #   runpy, a source exec'd, a settings file. pytest reading its configuration is the
    #   environment's reading; the server tells the tests' reading from the code's.
    def __init__(self, tree, environment):
        self.bytecode, self.read = [], {}
        since = time.time()
        given = sys.pycache_prefix and os.path.realpath(sys.pycache_prefix) + os.sep
        judged = (tree,) + environment
        seen = set()
        bytecode, read = self.bytecode, self.read
        def hook(event, args, isinstance=isinstance, str=str, len=len, getframe=sys._getframe):
            if event != 'open' or not isinstance(args[0], str):
                return
            name, mode, flags = args[0], args[1], args[2] if len(args) > 2 else 0
            if (isinstance(mode, str) and any(c in mode for c in 'wax+')) or (
                    mode is None and flags & (os.O_WRONLY | os.O_RDWR)):
                return  # a write: what matters is what is read
            if not name.endswith('.pyc'):
                real = os.path.realpath(name)
                if real.startswith(tree) and real not in read:
                    reader = registrar_file(getframe(1), environment, OWN_FILE)
                    if reader is not None and reader.startswith(tree):
                        read[real] = reader
                return
            if name in seen:
                return
            seen.add(name)
            real = os.path.realpath(name)
            if given and real.startswith(given):
                return
            try:
                if os.stat(real).st_ctime < since:
                    return
            except OSError:
                return
            source = bytecode_source(real)
            if source is None or source.startswith(judged):
                bytecode.append(real)
        sys.addaudithook(hook)

def plugin_watch(manager, registrars, environment, getattr=getattr, isinstance=isinstance,
                 all=all, map=map, len=len, id=id, is_=_is):
    # A function giving the files of the plugins registered with pytest since its last call. Bound
    # at start, as harness_intact's are.
    # Looked at once, and held, so that no later plugin reuses an id (a blocked name maps to None).
    seen = {id(None): None}
    last = ()  # pluggy's registry at the last call, in order
    def new_plugin_files():
        nonlocal last
        # After nearly every test nothing is new: pluggy's own mapping holds the same plugins in
        # the same order, compared by identity in C (get_plugins() builds a set in Python, 20 us a
        # test; a set of their ids, 3 us; this, 1.5 us).
        registered = getattr(manager, '_name2plugin', None)
        if isinstance(registered, dict):
            if len(registered) == len(last) and all(map(is_, registered.values(), last)):
                return set()
            last = tuple(registered.values())
        plugins = manager.get_plugins()
        fresh = [plugin for plugin in plugins if id(plugin) not in seen]
        seen.update((id(plugin), plugin) for plugin in fresh)
        if not fresh:
            return set()
        return plugin_files(manager, plugins, fresh, registrars, environment)
    return new_plugin_files

class CoachgateReporter:
    def __init__(self, report, version, opened, started):
        self.report = report
        self.started = started
        self.opened = opened
        self.version = version
        import pytest
        self.harness = harness_entries(pytest)
        self.harness_intact = harness_intact(self.harness)
        self.harness_told = set()
        self.new_plugin_files = None
        self.running = None
        self.environment = environment_prefixes()
        self.registrars = {}

    def process_ended(self, call, file, line):
        self.emit({'event': 'exit', 'call': call, 'file': file, 'line': line,
                   'nodeid': self.running})

    def check_harness(self, nodeid):
        changed = harness_replaced(self.harness, self.harness_intact, self.harness_told)
        if changed:
            self.emit({'event': 'harness', 'nodeid': nodeid, 'changed': changed})
        # Plugins registered once the session started (conftests, and whatever else hooks into
        # pytest): the server keeps the ones that are neither tests nor test support.
        added = self.new_plugin_files() if self.new_plugin_files else set()
        if added:
            self.emit({'event': 'plugins', 'nodeid': nodeid, 'files': sorted(added)})
        self.check_bytecode(nodeid)

    def check_bytecode(self, nodeid):
        forged = self.opened.bytecode
        if forged:
            self.emit({'event': 'bytecode', 'nodeid': nodeid, 'files': sorted(set(forged))})
            del forged[:]

    def emit(self, record, flush=True):
        self.write(json.dumps(record) + '\n', flush)

    def write(self, line, flush):
        self.report.write(line)
        if flush:
            self.report.flush()

    def pytest_plugin_registered(self, plugin):
        # pluggy's own announcement of a registration, made inside register(): the stack still
        # holds the code that asked for it. Held with the plugin, so a reused id is not misread.
        registrar = registrar_file(sys._getframe(1), self.environment, OWN_FILE)
        if registrar is not None:
            self.registrars[id(plugin)] = (plugin, registrar)

    def pytest_sessionstart(self, session):
        self.new_plugin_files = plugin_watch(session.config.pluginmanager, self.registrars,
                                             self.environment)
        self.new_plugin_files()
        self.emit({'event': 'start', 'pytest': self.version})
        if self.started:
            self.emit({'event': 'startup', 'files': self.started})

    def pytest_collection_finish(self, session):
        # Each parametrized case's values, before any test runs (src/runner/case-values.ts).
        for item in session.items:
            found = case_values(item)
            if found is not None:
                self.emit({'event': 'case', 'nodeid': item.nodeid, 'test': found[0],
                           'values': found[1]}, flush=False)
        self.report.flush()

    def pytest_runtest_logstart(self, nodeid):
        self.running = nodeid

    def pytest_runtest_logreport(self, report):
        when, outcome = report.when, report.outcome
        # A test's lines reach the file once it is over: a run killed later keeps them whole.
        flush = when == 'teardown'
        if when == 'teardown':
            self.check_harness(report.nodeid)
        if outcome == 'passed' and when == 'setup':
            return  # it decides nothing (JUnit ignores it too): one line fewer per test
        xfail = getattr(report, 'wasxfail', None)
        if outcome == 'passed' and xfail is None:
            # Nearly every line: formatted directly, at half the cost of a record through json, its
            # id quoted as json.dumps quotes a string (callgrind: 0.2 % of a 2,000-test run fewer).
            self.write(PASSED_LINE % (json_string(report.nodeid), when), flush)
            return
        record = {'event': 'test', 'nodeid': report.nodeid, 'when': when, 'outcome': outcome}
        if xfail is not None:
            record['xfail'] = xfail
        elif outcome == 'failed':
            record['message'] = failure_message(report.longreprtext)
        elif outcome == 'skipped':
            record['message'] = skip_message(report.longrepr)
        self.emit(record, flush)

    def pytest_collectreport(self, report):
        if report.failed:
            message = failure_message(report.longreprtext)
        elif report.skipped:
            message = skip_message(report.longrepr)
        else:
            return
        self.emit({'event': 'collect', 'nodeid': report.nodeid, 'outcome': report.outcome,
                   'message': message})

    def pytest_sessionfinish(self):
        self.check_bytecode('the session')
        read = sorted(self.opened.read.items())[:LOADED_LIMIT]
        self.emit({'event': 'loaded', 'files': loaded_files(), 'read': read})

    def pytest_internalerror(self, excrepr):
        self.emit({'event': 'internal', 'message': failure_message(str(excrepr))})

if __name__ == '__main__':
    report_path, args = sys.argv[1], sys.argv[2:]
    # Watching before pytest or anything of the tree is imported.
    tree = os.path.realpath(os.getcwd()) + os.sep
    environment = environment_prefixes()
    started = started_files(tree, environment)
    opened = OpenWatch(tree, environment)
    # As python -m pytest sees it: the working directory heads sys.path (unless -P / PYTHONSAFEPATH),
    # not this script's directory, and argv[0] is pytest's __main__.py.
    if not getattr(sys.flags, 'safe_path', False):
        sys.path[0] = os.getcwd()
    try:
        import pytest
    except ModuleNotFoundError as error:
        if error.name != 'pytest':
            raise
        # python -m's own words, which the failure classifier knows.
        program = getattr(sys, 'orig_argv', [sys.executable])[0]
        sys.stderr.write('%s: No module named pytest\n' % program)
        raise SystemExit(1)
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), '__main__.py')] + args
    with open(report_path, 'w', encoding='utf-8') as report:
        # pytest.console_main, with the plugin added.
        try:
            reporter = CoachgateReporter(report, pytest.__version__, opened, started)
            watch_process_end(reporter.process_ended)
            plugins = [reporter]
            here = os.path.dirname(os.path.abspath(__file__))
            config = observe_request(here) or {}
            recorder = call_recorder(config)
            if recorder:
                plugins.append(call_observer(recorder, pytest))
                if recorder.oracle:
                    plugins.append(oracle_verdicts(recorder, pytest))
            repeater = pytest_repeater(config, recorder, pytest)
            if repeater:
                plugins.append(repeater)
            equality = equality_watch(here, reporter.emit)
            if equality:
                plugins.append(equality_observer(equality))
            code = pytest.main(args, plugins=plugins)
            sys.stdout.flush()
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = 1
    raise SystemExit(code)
`;

export const PYTEST_REPORTER_FILE = 'coachgate_pytest.py';

/** Puts the reporter in the run's report directory, where the pytest invocation expects it. */
export async function writePytestReporter(reportDirectory: string): Promise<void> {
  await writeFile(path.join(reportDirectory, PYTEST_REPORTER_FILE), REPORTER_SOURCE);
}
