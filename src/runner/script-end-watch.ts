import { PYTHON_PROCESS_END_SOURCE } from './process-end-watch.js';

/**
 * Python the unittest shims' hook runs in a plain Python script a test command starts
 * (`python tests/check.py`), in a trusted run the server asks for (src/runner/unittest-shims.ts):
 * such a command speaks by its exit status alone (src/runner/exit-status.ts), so a product frame
 * that ends its process early, with status 0, would pass the checks it skipped. It watches the
 * calls that end a process (src/runner/process-end-watch.ts) and a `SystemExit` that leaves the
 * script's own top level, raised by `sys.exit`, `raise SystemExit`, `exit()` or argparse alike:
 * each is a JSON line in `END_PATH` naming the project's nearest frame to where it began. One the
 * script catches is not, nor the script's own ending (its `sys.exit(main())`): its frame is the
 * script's. A trace function sees the exceptions, taking line events at the script's top level
 * only (to see it go on after catching one); `sys.gettrace()` still answers `None`.
 */
export const SCRIPT_END_HOOK_SOURCE = String.raw`
import json, os, sys
${PYTHON_PROCESS_END_SOURCE}

def watch_script_end(end_path):
    def tell(call, file, line):
        main = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else None
        if file is not None and main == os.path.realpath(file):
            return  # the script ending itself
        with open(end_path, 'a', encoding='utf-8') as out:
            out.write(json.dumps({'call': call, 'file': file, 'line': line}) + '\n')
    report = watch_process_end(tell)
    raised = [None, None]  # the SystemExit last seen, and the frame it began in
    pending = [None]  # one that reached the script's top level: it ends the script if not caught

    def top(frame):
        return frame.f_back is None and frame.f_globals.get('__name__') == '__main__'

    def local(frame, event, arg):
        if event == 'exception' and issubclass(arg[0], SystemExit):
            if raised[0] is not arg[1]:
                raised[:] = [arg[1], frame]
            if top(frame):
                pending[0] = (arg[1].code, raised[1])
        elif event == 'line':
            pending[0] = None  # the top level went on: it caught the exception
        elif event == 'return' and pending[0] is not None and top(frame):
            report('SystemExit(%r)' % (pending[0][0],), pending[0][1])
        return local

    def trace(frame, event, arg):
        # Line events at the script's top level only: whether it goes on after an exception.
        frame.f_trace_lines = top(frame)
        return local
    sys.settrace(trace)
    real = sys.gettrace
    def gettrace():
        current = real()
        return None if current is trace else current
    gettrace.__name__ = gettrace.__qualname__ = 'gettrace'
    gettrace.__module__, gettrace.__doc__ = 'sys', real.__doc__
    sys.gettrace = gettrace

watch_script_end(END_PATH)
`;
