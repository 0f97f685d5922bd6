/**
 * Python the call recorder carries (src/runner/call-recorder.ts) so that a base test's oracle stays
 * the base's, in a trusted run: when a base test asks a function of a file the Player changed for
 * a verdict (it returned a bool, or "nothing wrong": None or an empty collection, about a value
 * the changed code returned to the test) the base's copy of that function is asked too, with the
 * same arguments. The base's copy is the base's text of the file run as a module of its own, not
 * entered in `sys.modules`, so what it imports is the Player's code: the base's judgement of the
 * Player's output. Where the two verdicts differ, the test fails with both answers: it passed only
 * by the Player's version of its judge (`assert is_valid(render(x))` with `is_valid` weakened).
 *
 * What the base's copy cannot judge leaves the test's own verdict alone: a copy that does not load
 * or has no such function, arguments that cannot be copied, a copy that fails other than by
 * refusing the value (AssertionError or ValueError, how validators say no: a method of the base
 * reading an attribute the Player renamed is not a verdict). The base's copy meets the Player's
 * classes under their names (its isinstance() checks take the Player's objects); its own classes
 * are read for their methods only. Operators and protocol methods (`__eq__`, `__contains__`) are
 * not judges: equality is judged by its effect (src/runner/equality-watch.ts). A call whose verdict
 * is "nothing wrong" is asked again only when it judged a value changed code returned (a mutator
 * returning None is not asked twice). At most ORACLE_LIMIT calls per run are asked again.
 */
export const ORACLE_WATCH_SOURCE = String.raw`
ORACLE_LIMIT = 200
OUTPUT_LIMIT = 1000
REFUSALS = (AssertionError, ValueError)
NO_FUNCTION = object()

class OracleWatch:
    def __init__(self, bases):
        self.bases = bases
        self.modules = {}  # changed file -> the base's namespace, or None when it cannot load
        self.pending = {}  # frame of a call a test made -> (file, name, globals, args, kwargs)
        self.verdicts = {}  # test -> the first disagreement's words
        self.test = None
        self.outputs = []  # values changed code returned to the current test (kept: ids stay)
        self.output_ids = set()
        self.budget = ORACLE_LIMIT

    def called(self, frame, filename, name, test, args, kwargs):
        if test != self.test:
            self.test, self.outputs, self.output_ids = test, [], set()
        self.pending[frame] = (filename, name, frame.f_globals, args, kwargs)

    def returned(self, frame, value, normally):
        entry = self.pending.pop(frame, None)
        if entry is None or not normally:
            return
        filename, name, names, args, kwargs = entry
        kind = verdict_kind(value)
        judged = self.judges_output(name, args, kwargs)
        self.remember(value)
        if kind is None or (kind == 'clear' and not judged) or self.test in self.verdicts:
            return
        if name.rsplit('.', 1)[-1].startswith('__'):
            return  # an operator or protocol method (==: src/runner/equality-watch.ts), not a judge
        if self.budget <= 0 or filename not in self.bases:
            return
        function = self.base_function(filename, names, name)
        if function is NO_FUNCTION:
            return
        self.budget -= 1
        answer = self.ask(function, args, kwargs)
        if answer is NO_FUNCTION or not disagrees(kind, value, answer):
            return
        shown = answer_words(answer)
        self.verdicts[self.test] = (
            "coachgate: the base's %s (%s) says %s where yours says %r, asked the same "
            "question %s by %s: the test's verdict was decided by your version of its judge. "
            "A base test's oracle stays the base's: fix the code so the base's %s accepts it, or "
            "acknowledge the test if a criterion changes what %s must say." % (
                name, shown_path(filename), shown, value, clipped(args, kwargs), self.test, name,
                name))

    def judges_output(self, name, args, kwargs):
        # Whether an argument (not a method's receiver) is a value changed code returned to the test.
        values = list(args[1:] if '.' in name else args) + list(kwargs.values())
        for value in values:
            if id(value) in self.output_ids:
                return True
            if type(value) in (list, tuple) and any(id(item) in self.output_ids for item in value):
                return True
        return False

    def remember(self, value):
        if value is None or type(value) in (bool, int, float) or len(self.outputs) >= OUTPUT_LIMIT:
            return
        self.outputs.append(value)
        self.output_ids.add(id(value))

    def base_function(self, filename, names, name):
        if filename not in self.modules:
            self.modules[filename] = base_namespace(filename, self.bases[filename], names)
        found = self.modules[filename]
        if found is None:
            return NO_FUNCTION
        namespace, classes = found
        import inspect
        parts = name.split('.')
        target = classes.get(parts[0]) if len(parts) > 1 else namespace.get(parts[0])
        for part in parts[1:]:
            target = inspect.getattr_static(target, part, None)
        target = getattr(target, '__func__', target)  # a staticmethod's or classmethod's function
        return target if callable(target) else NO_FUNCTION

    def ask(self, function, args, kwargs):
        import copy
        try:
            args, kwargs = copy.deepcopy((args, kwargs))  # the test's own values stay untouched
        except Exception:
            return NO_FUNCTION
        try:
            return function(*args, **kwargs)
        except REFUSALS as error:
            return error
        except Exception:
            return NO_FUNCTION

    def failure(self, test):
        return self.verdicts.get(test)

def verdict_kind(value):
    # 'bool' for a predicate's answer, 'clear' for "nothing wrong", None for any other value.
    if type(value) is bool:
        return 'bool'
    if value is None or (type(value) in (list, tuple, dict, set, str) and not value):
        return 'clear'
    return None

def disagrees(kind, value, answer):
    refused = isinstance(answer, BaseException)
    if kind == 'clear':
        return refused or (type(answer) is type(value) and bool(answer))
    try:
        return value if refused else bool(answer) != value
    except Exception:
        return False

def answer_words(answer):
    if isinstance(answer, BaseException):
        return 'no (%s: %s)' % (type(answer).__name__, str(answer)[:200])
    try:
        return repr(answer)[:200]
    except Exception:
        return '<unreadable>'

def shown_path(filename):
    relative = os.path.relpath(filename)
    return filename if relative.startswith('..') else relative.replace(os.sep, '/')

def clipped(args, kwargs):
    try:
        text = repr(args) + (' %r' % kwargs if kwargs else '')
    except Exception:
        return '(unreadable arguments)'
    return text if len(text) <= 200 else text[:200] + '...'

def base_namespace(filename, text, names):
    # The base's text of a changed module, run as a module of its own under the Player's module's
    # name and package: its imports reach the Player's modules. Its code is named apart, so no
    # watcher of the run takes it for the Player's file.
    import types
    module = types.ModuleType(names.get('__name__') or 'coachgate_base')
    module.__dict__.update(__file__=filename, __package__=names.get('__package__'),
                           __spec__=names.get('__spec__'), __builtins__=names.get('__builtins__'))
    try:
        exec(compile(text, '<base of %s>' % filename, 'exec'), module.__dict__)
    except BaseException:
        return None
    # Its classes are looked up for their methods, but its code meets the Player's under their
    # names: the objects it judges are the Player's, and isinstance() must say so.
    namespace, classes = module.__dict__, {}
    for key, value in list(namespace.items()):
        player = names.get(key)
        if (isinstance(value, type) and value.__module__ == module.__name__
                and isinstance(player, type)):
            classes[key] = value
            namespace[key] = player
    return namespace, classes

def oracle_watch(config):
    # The watch the server's request asks for: the changed Python files' texts at the base.
    bases = config.get('bases')
    return OracleWatch(bases) if bases else None

def oracle_verdicts(recorder, pytest):
    # The pytest plugin that fails a passing test whose judge's base copy said otherwise.
    class CoachgateOracle:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            report = outcome.get_result()
            failure = recorder.oracle.failure(item.nodeid)
            if report.when == 'call' and report.passed and failure:
                report.outcome = 'failed'
                report.longrepr = 'E   ' + failure
    return CoachgateOracle()
`;
