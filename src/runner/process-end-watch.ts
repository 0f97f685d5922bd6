/**
 * Python for coachgate's pytest reporter: ending the test process is an observed event. The functions
 * that end a process without returning to the runner (`_exit` and `abort` of the `posix` module,
 * which `os` re-exports, and `signal.raise_signal` / `signal.pthread_kill`) are replaced, in both
 * modules, by one that first tells the report, then calls the original; a signal the process sends
 * itself through `os.kill` / `os.killpg` is seen by an audit hook. Whatever name or route the code
 * reached the function by (an alias, `importlib`, `getattr` with a computed name), it is the same
 * object, so the call is named with the nearest frame of the project that made it. Only the runner's
 * own process reports: a forked child ending (multiprocessing does it with `os._exit`) ends no test.
 * `sys.exit` and `raise SystemExit` are not watched: pytest and unittest fail the test that raises
 * it. An ending function the project registers with `atexit` runs with no frame of the project on
 * the stack: it is named by where it was registered.
 */
export const PYTHON_PROCESS_END_SOURCE = String.raw`
# Signals whose default action ends the process; a caught one (a handler installed) ends nothing.
ENDING_SIGNALS = ('SIGKILL', 'SIGTERM', 'SIGABRT', 'SIGQUIT', 'SIGHUP', 'SIGSEGV', 'SIGBUS')

def watch_process_end(tell):
    # Returns report(call, frame): how a watcher of other ends (a plain script's SystemExit) tells.
    import atexit, posix, signal
    runner_pid = os.getpid()
    root = os.path.realpath(os.getcwd()) + os.sep
    ending = set(getattr(signal, name) for name in ENDING_SIGNALS if hasattr(signal, name))

    def project_frame(frame):
        while frame is not None:
            real = os.path.realpath(frame.f_code.co_filename)
            if real.startswith(root) and os.sep + 'site-packages' + os.sep not in real:
                return real[len(root):], frame.f_lineno
            frame = frame.f_back
        return None, None

    def ends(sig):
        handler = signal.getsignal(sig)
        return sig in ending and handler in (signal.SIG_DFL, None)

    # Where the project registered each exit handler: one that is itself an ending call (atexit
    # calls it with no frame of the project on the stack) is named by its registration.
    registered = {}
    register = atexit.register
    def registering(function, *args, **kwargs):
        file, line = project_frame(sys._getframe(1))
        if file is not None:
            registered.setdefault(id(function), (function, file, line))
        return register(function, *args, **kwargs)
    registering.__name__ = registering.__qualname__ = 'register'
    registering.__module__, registering.__doc__ = 'atexit', register.__doc__
    atexit.register = registering

    def caller(depth):
        try:
            return sys._getframe(depth + 1)
        except ValueError:
            return None  # called from C with no Python frame (atexit, a signal)

    def report(call, frame, function=None):
        if os.getpid() == runner_pid:
            file, line = project_frame(frame)
            if file is None and function is not None:
                file, line = registered.get(id(function), (None, None, None))[1:]
            tell(call, file, line)

    def wrapped(module, label, name, decides=lambda args: True):
        original = getattr(module, name)
        def ending_call(*args):
            if decides(args):
                shown = '%s.%s(%s)' % (label, name, ', '.join(map(repr, args)))
                report(shown, caller(1), ending_call)
            return original(*args)
        ending_call.__name__ = original.__name__
        ending_call.__qualname__ = getattr(original, '__qualname__', original.__name__)
        ending_call.__doc__ = original.__doc__
        ending_call.__module__ = original.__module__
        return ending_call

    for name in ('_exit', 'abort'):
        replacement = wrapped(posix, 'os', name)
        setattr(posix, name, replacement)
        setattr(os, name, replacement)
    if hasattr(signal, 'raise_signal'):
        signal.raise_signal = wrapped(signal, 'signal', 'raise_signal', lambda args: ends(args[0]))
    if hasattr(signal, 'pthread_kill'):
        signal.pthread_kill = wrapped(signal, 'signal', 'pthread_kill', lambda args: ends(args[1]))

    def audit(event, args):
        if event == 'os.kill':
            pid, sig = args
            if pid in (runner_pid, 0) and ends(sig):
                report('os.kill(%r, %r)' % (pid, sig), caller(1))
        elif event == 'os.killpg':
            pgid, sig = args
            if pgid == os.getpgid(0) and ends(sig):
                report('os.killpg(%r, %r)' % (pgid, sig), caller(1))
    sys.addaudithook(audit)
    return report
`;
