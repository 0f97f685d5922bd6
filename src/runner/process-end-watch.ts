/**
 * Python for coachgate's pytest reporter: ending the test process is an observed event. The functions
 * that end a process without returning to the runner (`_exit` and `abort` of the `posix` module,
 * which `os` re-exports, and `signal.raise_signal` / `signal.pthread_kill`) are replaced, in both
 * modules, by one that first tells the report, then calls the original; a signal the process sends
 * itself through `os.kill` / `os.killpg` is seen by an audit hook. Whatever name or route the code
 * reached the function by (an alias, `importlib`, `getattr` with a computed name), it is the same
 * object, so the call is named with the nearest frame of the project that made it. Only the runner's
 * own process reports: a forked child ending (multiprocessing does it with `os._exit`) ends no test.
 * `sys.exit` and `raise SystemExit` are not watched: pytest fails the test that raises it.
 */
export const PYTHON_PROCESS_END_SOURCE = String.raw`
# Signals whose default action ends the process; a caught one (a handler installed) ends nothing.
ENDING_SIGNALS = ('SIGKILL', 'SIGTERM', 'SIGABRT', 'SIGQUIT', 'SIGHUP', 'SIGSEGV', 'SIGBUS')

def watch_process_end(tell):
    import posix, signal
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

    def report(call, frame):
        if os.getpid() == runner_pid:
            file, line = project_frame(frame)
            tell(call, file, line)

    def wrapped(module, label, name, decides=lambda args: True):
        original = getattr(module, name)
        def ending_call(*args):
            if decides(args):
                report('%s.%s(%s)' % (label, name, ', '.join(map(repr, args))), sys._getframe(1))
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
                report('os.kill(%r, %r)' % (pid, sig), sys._getframe(1))
        elif event == 'os.killpg':
            pgid, sig = args
            if pgid == os.getpgid(0) and ends(sig):
                report('os.killpg(%r, %r)' % (pgid, sig), sys._getframe(1))
    sys.addaudithook(audit)
`;
