/**
 * Python the pytest reporter carries to record, during a trusted run, the calls the tests make into
 * the Player's changed product files (src/observation/ replays them outside the harness). It is
 * active only when the server put `coachgate_observe.json` beside the reporter, in the run's own
 * report directory: no argument, variable or output the tests could see changes.
 *
 * A profile hook (Python 3.11 has no per-function monitoring), on while test code runs, sees every
 * call; it keeps the
 * outermost call into a function of a changed file (nested calls are reproduced by replaying their
 * caller). Such a call is recorded when its caller is a test-side file and its arguments are plain
 * values; its result is recorded when plain, else the call is replayed for its effect only. Any other
 * outermost call into a changed file is a `state` line: what it did to the module cannot be replayed,
 * so later calls into that module are not compared (src/observation/judge.ts). The record stops at
 * CALL_LIMIT calls with a `cut` line.
 */
export const CALL_RECORDER_SOURCE = String.raw`
CALL_LIMIT = 2000
VALUE_LIMIT = 2000
ITEM_LIMIT = 500
PLAIN_ATOMS = frozenset([int, float, str, bool, type(None)])
FUNCTION_FLAGS = 0x01          # CO_OPTIMIZED: a function, not a module or class body
GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generators, coroutines, async generators
RUNNER_VARIABLE = re.compile(r'^(?:_?PYTEST|COV_CORE)', re.I)

def runner_free_environ():
    return {name: value for name, value in os.environ.items() if not RUNNER_VARIABLE.match(name)}

def plain_repr(value):
    # The value's repr when it is made of plain values only (exact types: a subclass may lie about
    # equality), within the size bounds; None otherwise.
    budget = [ITEM_LIMIT]
    def plain(value, depth):
        kind = type(value)
        if kind in PLAIN_ATOMS:
            return True
        budget[0] -= len(value) if kind in (list, tuple, dict) else ITEM_LIMIT
        if depth > 8 or budget[0] < 0:
            return False
        if kind is list or kind is tuple:
            return all(plain(item, depth + 1) for item in value)
        if kind is dict:
            return all(type(key) in PLAIN_ATOMS and plain(item, depth + 1)
                       for key, item in value.items())
        return False
    if not plain(value, 0):
        return None
    text = repr(value)
    return text if len(text) <= VALUE_LIMIT else None

def call_arguments(code, values):
    # The call's arguments as bound to the parameters: positional ones, *args, keyword-only, **kw.
    names = code.co_varnames
    positional = code.co_argcount
    keyword = code.co_kwonlyargcount
    args = [values.get(name) for name in names[:positional]]
    index = positional + keyword
    if code.co_flags & 0x04:
        args.extend(values.get(names[index], ()))
        index += 1
    kwargs = {name: values.get(name) for name in names[positional:positional + keyword]}
    if code.co_flags & 0x08:
        kwargs.update(values.get(names[index], {}))
    return tuple(args), kwargs

class CallRecorder:
    def __init__(self, config, out):
        import dis
        self.files = frozenset(config['files'])
        self.callers = frozenset(config['callers'])
        self.out = out
        self.test = None
        self.count = 0
        self.touched = False  # whether the current test called into a changed file
        self.oracle = oracle_watch(config)  # the base's judges asked too (src/runner/oracle-watch.ts)
        self.returned = dis.opmap['RETURN_VALUE']
        self.profile = self.make_profile()
        self.getprofile = sys.getprofile
        # What a test may change around a call (monkeypatch.setenv, chdir): the replay sets it again.
        self.environ = runner_free_environ()
        self.cwd = os.getcwd()

    def surroundings(self, record):
        current = runner_free_environ()
        if current != self.environ:
            record['env'] = {
                'set': {name: value for name, value in current.items()
                        if self.environ.get(name) != value},
                'unset': [name for name in self.environ if name not in current]}
        cwd = os.getcwd()
        if cwd != self.cwd:
            record['cwd'] = cwd

    def write(self, record):
        self.out.write(json.dumps(record) + '\n')

    def start(self):
        if self.getprofile() is None and self.count < CALL_LIMIT:
            sys.setprofile(self.profile)

    def stop(self):
        if self.getprofile() is self.profile:
            sys.setprofile(None)

    def finish(self):
        self.stop()
        self.write({'event': 'end', 'sys_path': [p for p in sys.path if isinstance(p, str)]})
        self.out.flush()

    def make_profile(self):
        codes = {}  # code -> False (not observed), or (name the tests call it by, wrapper's code)
        files = {}
        active = {}  # frame of each outermost call into a changed file -> its record, or None
        realpath = os.path.realpath
        def real(name):
            found = files.get(name)
            if found is None:
                found = files[name] = realpath(name)
            return found
        def frame_file(frame):
            # The file of the module a frame's code belongs to. Its module's __file__ first: pytest
            # loads a test module from its own bytecode cache (the server's, filled by the
            # baseline in another directory) without fixing co_filename to the snapshot's path.
            name = frame.f_globals.get('__file__')
            return real(name if isinstance(name, str) else frame.f_code.co_filename)
        def decide(frame, code):
            if (real(code.co_filename) not in self.files or not code.co_flags & FUNCTION_FLAGS
                    or code.co_flags & GENERATOR_FLAGS):
                return False
            return entry_point(frame.f_globals, code)
        def on_call(frame, code, entry):
            name, wrapper = entry
            caller = frame.f_back
            if caller is not None and wrapper is not None and caller.f_code is wrapper:
                caller = caller.f_back  # a decorator's wrapper defined elsewhere
            where = frame_file(caller) if caller is not None else None
            if where in self.files:
                return  # the module's own body (an import, a decorator): replayed by importing
            self.touched = True
            module = frame.f_globals.get('__name__')
            record = None
            if (name is not None and caller is not None
                    and where in self.callers
                    and isinstance(module, str) and module != '__main__'):
                args, kwargs = call_arguments(code, frame.f_locals)
                if self.oracle is not None:
                    self.oracle.called(frame, real(code.co_filename), name, self.test, args, kwargs)
                shown_args, shown_kwargs = plain_repr(args), plain_repr(kwargs)
                if shown_args is not None and shown_kwargs is not None:
                    record = {'event': 'call', 'test': self.test, 'module': module,
                              'function': name, 'file': real(code.co_filename),
                              'args': shown_args, 'kwargs': shown_kwargs}
                    self.surroundings(record)
            active[frame] = record
            if record is None:
                self.write({'event': 'state', 'test': self.test, 'module': module})
        def on_return(frame, value):
            record = active.pop(frame)
            code = frame.f_code
            normally = code.co_code[frame.f_lasti] == self.returned
            if self.oracle is not None:
                self.oracle.returned(frame, value, normally)
            if record is None:
                return
            if normally:
                shown = plain_repr(value)
                if shown is None:
                    record['opaque'] = True
                else:
                    record['result'] = shown
            else:
                record['raised'] = True
            self.write(record)
            self.count += 1
            if self.count >= CALL_LIMIT:
                self.write({'event': 'cut', 'test': self.test})
                sys.setprofile(None)
        def profile(frame, event, arg):
            if event == 'call':
                if active:
                    return  # inside a recorded call: replaying it reproduces this one
                code = frame.f_code
                entry = codes.get(code)
                if entry is None:
                    entry = codes[code] = decide(frame, code)
                if entry:
                    on_call(frame, code, entry)
            elif event == 'return' and active and frame in active:
                on_return(frame, arg)
        return profile

def unwraps_to(value, code):
    # Whether value is the function of code, or a decorator's wrapper of it (functools.wraps).
    for _ in range(5):
        if getattr(value, '__code__', None) is code:
            return True
        value = getattr(value, '__wrapped__', None)
        if value is None:
            return False
    return False

def entry_point(namespace, code):
    # The name a caller outside the module reaches this code by (its qualified name, or the
    # module-level name of a lambda or a decorated function), and the code of the wrapper that name
    # holds when it is not the function itself; (None, None) when none does (a nested function).
    qualname = code.co_qualname
    candidates = []
    if '<' not in qualname:
        target = namespace.get(qualname.split('.')[0])
        for part in qualname.split('.')[1:]:
            target = getattr(target, part, None)
        candidates.append((qualname, target))
    candidates.extend((name, value) for name, value in list(namespace.items())
                      if isinstance(name, str) and callable(value))
    for name, value in candidates:
        if unwraps_to(value, code):
            outer = getattr(value, '__code__', None)
            return (name, None if outer is code else outer)
    return (None, None)

def call_observer(recorder, pytest):
    # The pytest plugin that turns the recorder on where test code runs: each test's setup, call
    # and teardown. pytest's own work between them (reports, hooks) calls nothing of the product;
    # watching the test modules' import (assertion rewriting, importlib) doubled the CPU time of a
    # 1,500-test run, so calls made at collection are not seen (docs/threat-model.md).
    def watching(wrapped):
        return pytest.hookimpl(hookwrapper=True)(wrapped)
    class CoachgateObserver:
        @watching
        def pytest_runtest_setup(self, item):
            recorder.test = item.nodeid
            recorder.start()
            yield
            recorder.stop()
        @watching
        def pytest_runtest_call(self, item):
            recorder.start()
            yield
            recorder.stop()
        @watching
        def pytest_runtest_teardown(self, item):
            recorder.start()
            yield
            recorder.stop()
        def pytest_sessionfinish(self):
            recorder.finish()
    return CoachgateObserver()

def hide_profile(recorder):
    # sys.getprofile answers as if the recorder were not there: the tests see the run they would
    # see without coachgate (a profiler of their own is still theirs).
    real = sys.getprofile
    def getprofile():
        current = real()
        return None if current is recorder.profile else current
    getprofile.__name__ = getprofile.__qualname__ = 'getprofile'
    getprofile.__module__ = 'sys'
    getprofile.__doc__ = real.__doc__
    sys.getprofile = getprofile
    recorder.getprofile = real

def call_recorder(config):
    # The recorder the request asks for, or None when it names no changed file or no test file.
    if not config.get('files') or not config.get('callers'):
        return None
    recorder = CallRecorder(config, open(config['calls'], 'w', encoding='utf-8'))
    hide_profile(recorder)
    return recorder
`;
