import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Python the pytest reporter carries to judge equality by its effect, in a trusted run: each
 * passing `==` or `!=` whose operand's type comes from a file the Player changed (its class, a base
 * class, or the code of its `__eq__`/`__ne__`, however the class got it) is compared again as the
 * plain value the operand stands for: its builtin base read with the builtin's own methods, else
 * its fields (dataclass fields, `__dict__`, slots), recursively. A comparison that then disagrees
 * is reported with the test, the type and the place. Only the Player's equality counts: a class
 * whose lines, `__eq__`/`__ne__` and the helpers they name (a few calls deep) the change left as
 * the base had them is not compared again, so an honest normalising equality the base already held
 * stays the base's, whatever else the Player changed in its file.
 *
 * The operands come from what the runner already hands over:
 * - pytest's rewritten asserts, built with the assertion-pass branch on (as
 *   `enable_assertion_pass_hook` builds them) by coachgate's own call of the rewriter, so the
 *   project's configuration, argv and `getini` read as before; rewritten modules take a cache name
 *   of their own, so a cached rewrite without the branch is never read. pytest's `_call_reprcompare`
 *   is handed each comparison's operands and results; the pass branch says the assert held.
 * - unittest's `assertEqual`, through the equality function it looks up for its operands
 *   (`_getAssertEqualityFunc`): the type-specific assertions it dispatches to are covered too.
 * Active only when the server put `coachgate_equality.json` beside the reporter.
 */
export const EQUALITY_WATCH_SOURCE = String.raw`
import difflib, inspect, json, os, sys
EQUALITY_CONFIG = 'coachgate_equality.json'
EQUALITY_LIMIT = 50
PLAIN_ATOMS = frozenset([int, float, complex, str, bytes, bool, type(None)])
BUILTIN_READERS = (
    (bool, bool), (int, int.__int__), (float, float.__float__), (str, str.__str__),
    (bytes, lambda value: bytes(memoryview(value))),
    (tuple, lambda value: tuple.__getitem__(value, slice(None))), (list, list.copy),
    (dict, dict.copy), (frozenset, frozenset.copy), (set, set.copy))

NOT_BUILTIN = object()
MISSING_CLASS = object()

class Opaque(Exception):
    # A value whose plain form cannot be read: the comparison is left to its own equality.
    pass

def builtin_value(value):
    # The builtin value an instance of a builtin's subclass holds, read with the builtin's own
    # methods (the subclass's overrides are not called).
    for base, read in BUILTIN_READERS:
        if isinstance(value, base):
            return read(value)
    return NOT_BUILTIN

def data_fields(value):
    # What an object holds: its dataclass fields (all of them: a field left out of the comparison
    # is data too), else its __dict__ and slots, read past any __getattribute__ of its class.
    import dataclasses
    read = object.__getattribute__
    if dataclasses.is_dataclass(value):
        return {field.name: read(value, field.name) for field in dataclasses.fields(value)}
    try:
        fields = dict(read(value, '__dict__'))
    except AttributeError:
        fields = {}
    for kind in type(value).__mro__:
        slots = kind.__dict__.get('__slots__', ())
        for name in [slots] if isinstance(slots, str) else slots:
            try:
                fields.setdefault(name, read(value, name))
            except AttributeError:
                pass
    return fields

def stands_for(value, other):
    # A one-field object compared with what is not an object's data stands for its one field (a
    # Meters(5) compared with 5).
    if type(value) is dict and len(value) == 1 and type(other) is not dict:
        return next(iter(value.values()))
    return value

def changed_lines(path, base):
    # The lines of path the change added or rewrote (beside a deletion, both neighbours), or None
    # when every line is the Player's (a file the base did not have, or one that cannot be read).
    if base is None:
        return None
    try:
        with open(path, encoding='utf-8', errors='replace') as handle:
            now = handle.read().splitlines()
    except OSError:
        return None
    lines = set()
    matcher = difflib.SequenceMatcher(None, base.splitlines(), now, autojunk=False)
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag != 'equal':
            lines.update(range(start, end + 2) if start == end else range(start + 1, end + 1))
    return lines

def code_lines(code):
    lines = [line for _, _, line in code.co_lines() if line] if hasattr(code, 'co_lines') else []
    return range(code.co_firstlineno, max(lines + [code.co_firstlineno]) + 1)

def class_lines(cls):
    try:
        source, start = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return None
    return range(start, start + len(source))

class EqualityWatch:
    def __init__(self, files, report, bases=None):
        self.files = frozenset(files)
        bases = bases or {}
        self.changed = {name: changed_lines(name, bases.get(name)) for name in files}
        self.report = report
        self.real = {}
        self.classes = {}
        self.pending = []
        self.test = None
        self.count = 0

    def real_file(self, name):
        found = self.real.get(name)
        if found is None:
            found = self.real[name] = os.path.realpath(name)
        return found

    def changed_class(self, kind):
        # The class of kind's lineage that a changed file defines, or whose equality methods a
        # changed file's code is; None when none is. Known per type and equality method pair
        # (an __eq__ set on the class later is another pair).
        key = (kind, getattr(kind, '__eq__', None), getattr(kind, '__ne__', None))
        found = self.classes.get(key, MISSING_CLASS)
        if found is MISSING_CLASS:
            found = self.classes[key] = self.lineage_class(kind)
        return found

    def touched(self, name, lines):
        # Whether the change wrote any of these lines of a changed file (unknown lines: yes).
        if not isinstance(name, str):
            return False
        name = self.real_file(name)
        if name not in self.files:
            return False
        changed = self.changed.get(name)
        return changed is None or lines is None or any(line in changed for line in lines)

    def lineage_class(self, kind):
        for cls in kind.__mro__:
            module = sys.modules.get(cls.__dict__.get('__module__') or '')
            name = getattr(module, '__file__', None)
            if isinstance(name, str) and self.touched(name, class_lines(cls)):
                return cls
            for method in ('__eq__', '__ne__'):
                function = cls.__dict__.get(method)
                code = getattr(function, '__code__', None)
                if code is not None and self.reaches_change(code, cls, function.__globals__):
                    return cls
        return None

    def reaches_change(self, code, owner, names, depth=0):
        # Whether the change wrote this code, or a function or method it names (a helper the
        # equality calls), a few calls deep: an untouched __eq__ that calls a rewritten helper is
        # the Player's equality too.
        if self.touched(code.co_filename, code_lines(code)):
            return True
        if depth >= 3:
            return False
        inner = [const for const in code.co_consts if hasattr(const, 'co_code')]
        for name in code.co_names:
            for found in (names.get(name), inspect.getattr_static(owner, name, None)):
                found = getattr(found, '__func__', None) or getattr(found, 'fget', None) or found
                if getattr(found, '__code__', None) is not None:
                    inner.append((found.__code__, getattr(found, '__globals__', names)))
        for item in inner:
            found, scope = item if isinstance(item, tuple) else (item, names)
            if found is not code and self.reaches_change(found, owner, scope, depth + 1):
                return True
        return False

    def plain(self, value, depth=0):
        kind = type(value)
        if kind in PLAIN_ATOMS:
            return value
        if depth > 8:
            raise Opaque()
        if kind is list or kind is tuple:
            return kind(self.plain(item, depth + 1) for item in value)
        if kind is dict:
            return {key: self.plain(item, depth + 1) for key, item in value.items()}
        if kind is set or kind is frozenset:
            try:
                return frozenset(self.plain(item, depth + 1) for item in value)
            except TypeError:
                raise Opaque()
        if self.changed_class(kind) is None:
            return value  # its equality is not the Player's
        base = builtin_value(value)
        if base is not NOT_BUILTIN:
            return self.plain(base, depth + 1)
        return {name: self.plain(item, depth + 1) for name, item in data_fields(value).items()}

    def check(self, op, left, right, frame):
        if left is right or self.count >= EQUALITY_LIMIT:
            return
        decider = self.changed_class(type(left)) or self.changed_class(type(right))
        if decider is None:
            return
        try:
            plain_left, plain_right = self.plain(left), self.plain(right)
            same = stands_for(plain_left, plain_right) == stands_for(plain_right, plain_left)
        except Exception:
            return  # no plain value to compare: the comparison stays the type's
        if bool(same) == (op == '=='):
            return
        self.count += 1
        module = sys.modules.get(decider.__dict__.get('__module__') or '')
        self.report({'event': 'equality', 'nodeid': self.test or 'a test', 'op': op,
                     'type': '%s.%s' % (decider.__module__, decider.__qualname__),
                     'type_file': getattr(module, '__file__', None) or '?',
                     'file': frame.f_code.co_filename, 'line': frame.f_lineno,
                     'left': safe_repr(plain_left), 'right': safe_repr(plain_right)})

    def compared(self, frame, ops, results, operands):
        # pytest's account of one comparison chain in a passing assert: the pairs it found true,
        # held until the assert is over; the index pytest's explanation stops at.
        for index, op in enumerate(ops):
            try:
                held = bool(results[index])
            except Exception:
                return index
            if not held:
                return index
            if op in ('==', '!='):
                self.pending.append((frame, op, operands[index], operands[index + 1]))
        return len(ops) - 1

    def assert_passed(self, frame):
        pending, self.pending = self.pending, []
        for held_frame, op, left, right in pending:
            if held_frame is frame:
                self.check(op, left, right, frame)

    def start(self, test):
        self.test = test
        self.pending = []

def safe_repr(value):
    try:
        text = repr(value)
    except Exception:
        return '<unreadable>'
    return text if len(text) <= 300 else text[:300] + '...'

def watch_pytest_asserts(watch):
    # pytest's rewritten asserts, with the pass branch on, hand their operands to the watch.
    from _pytest.assertion import rewrite, util
    names = ('AssertionRewriter', 'rewrite_asserts', '_call_reprcompare', '_call_assertion_pass',
             '_check_if_assertion_pass_impl', 'PYC_TAIL', 'PYTEST_TAG', 'PYC_EXT')
    if not all(hasattr(rewrite, name) for name in names):
        return
    Rewriter = rewrite.AssertionRewriter
    def rewrite_asserts(mod, source, module_path=None, config=None):
        rewriter = Rewriter(module_path, config, source)
        rewriter.enable_assertion_pass_hook = True
        rewriter.run(mod)
    def project_hook():
        # The project's own pass hook is called only where its configuration asked for it.
        config = getattr(util, '_config', None)
        return config is not None and config.getini('enable_assertion_pass_hook')
    passing = []  # the frames whose assert passed, while the pass branch explains it
    def check_if_assertion_pass_impl():
        passing.append(sys._getframe(1))
        return True
    call_reprcompare = rewrite._call_reprcompare
    def reprcompare(ops, results, expls, each_obj):
        frame = sys._getframe(1)
        if not passing or passing[-1] is not frame:
            return call_reprcompare(ops, results, expls, each_obj)  # a failed assert's report
        stop = watch.compared(frame, ops, results, each_obj)
        # No one reads a passing assert's report unless the project asked: pytest's comparison
        # report (a diff of the operands) is not made for it.
        return call_reprcompare(ops, results, expls, each_obj) if project_hook() else expls[stop]
    call_assertion_pass = rewrite._call_assertion_pass
    def assertion_pass(lineno, orig, expl):
        frame = sys._getframe(1)
        if passing and passing[-1] is frame:
            passing.pop()
        watch.assert_passed(frame)
        if project_hook():
            call_assertion_pass(lineno, orig, expl)
    rewrite.rewrite_asserts = rewrite_asserts
    rewrite._call_reprcompare = reprcompare
    rewrite._call_assertion_pass = assertion_pass
    rewrite._check_if_assertion_pass_impl = check_if_assertion_pass_impl
    rewrite.PYC_TAIL = '.' + rewrite.PYTEST_TAG + '-coachgate-equality' + rewrite.PYC_EXT

def watch_assert_equal(watch):
    # unittest's assertEqual calls the equality function it looks up for its operands: the one
    # handed back is checked once it returns (the assertion held).
    import unittest
    case = unittest.TestCase
    look_up = case.__dict__.get('_getAssertEqualityFunc')
    if look_up is None:
        return
    own_file = unittest.case.__file__
    def _getAssertEqualityFunc(self, first, second):
        compare = look_up(self, first, second)
        def asserted(first, second, msg=None):
            compare(first, second, msg=msg)
            frame = sys._getframe(1)
            while frame.f_back is not None and frame.f_code.co_filename == own_file:
                frame = frame.f_back
            watch.check('==', first, second, frame)
        return asserted
    _getAssertEqualityFunc.__qualname__ = look_up.__qualname__
    _getAssertEqualityFunc.__doc__ = look_up.__doc__
    case._getAssertEqualityFunc = _getAssertEqualityFunc

def equality_watch(directory, report):
    # The watch the server asked for (its changed files), or None for every run it did not.
    config_path = os.path.join(directory, EQUALITY_CONFIG)
    if not os.path.exists(config_path):
        return None
    with open(config_path, encoding='utf-8') as handle:
        config = json.load(handle)
    watch = EqualityWatch(config['files'], report, config.get('bases'))
    watch_assert_equal(watch)
    return watch

def equality_cases(records, template):
    # The unittest recorder's error cases, in the words the pytest report's parser uses; files by
    # their paths from the run's directory.
    here = os.getcwd()
    def shown(name):
        relative = os.path.relpath(name, here)
        return name if relative.startswith('..') else relative.replace(os.sep, '/')
    return [template % dict(record, file=shown(record['file']),
                             type_file=shown(record['type_file'])) for record in records]

def equality_observer(watch):
    # The pytest plugin that tells the watch which test runs.
    watch_pytest_asserts(watch)
    class CoachgateEquality:
        def pytest_runtest_logstart(self, nodeid):
            watch.start(nodeid)
    return CoachgateEquality()
`;

/**
 * Asks the run's reporter to judge equality by effect for the changed product files; `bases` holds
 * each one's text at the base (absent: a file the base did not have), so only the lines the Player
 * wrote decide whose equality it is.
 */
export async function requestEqualityWatch(
  reportDirectory: string,
  files: readonly string[],
  bases: Readonly<Record<string, string>> = {},
): Promise<void> {
  await writeFile(
    path.join(reportDirectory, 'coachgate_equality.json'),
    JSON.stringify({ files, bases }),
  );
}
