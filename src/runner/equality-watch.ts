import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Python the pytest reporter carries to judge equality by its effect, in a trusted run: each
 * passing `==` or `!=` whose operand's type comes from a file the Player changed (its class, a base
 * class, or the code of its `__eq__`/`__ne__`, however the class got it) is compared again as the
 * plain value the operand stands for: its builtin base read with the builtin's own methods, else
 * its fields (dataclass fields, `__dict__`, slots), recursively. A comparison that then disagrees
 * is reported with the test, the type and the place.
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
import json, os, sys
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

class EqualityWatch:
    def __init__(self, files, report):
        self.files = frozenset(files)
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

    def lineage_class(self, kind):
        for cls in kind.__mro__:
            module = sys.modules.get(cls.__dict__.get('__module__') or '')
            name = getattr(module, '__file__', None)
            if isinstance(name, str) and self.real_file(name) in self.files:
                return cls
            for method in ('__eq__', '__ne__'):
                code = getattr(cls.__dict__.get(method), '__code__', None)
                if code is not None and self.real_file(code.co_filename) in self.files:
                    return cls
        return None

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
    watch = EqualityWatch(config['files'], report)
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

/** Asks the run's reporter to judge equality by effect for the changed product files. */
export async function requestEqualityWatch(
  reportDirectory: string,
  files: readonly string[],
): Promise<void> {
  await writeFile(path.join(reportDirectory, 'coachgate_equality.json'), JSON.stringify({ files }));
}
