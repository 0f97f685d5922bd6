/**
 * Python the pytest reporter carries to run, during a trusted run, each test that may show the
 * Player's change a second time in the same process state (src/observation/repetition.ts reads the
 * answers). Active only when the server's request in the run's report directory asks for it
 * (src/runner/call-recorder.ts reads that request), so nothing the tests see changes.
 *
 * Which tests: those that passed and either belong to a file the request names (the Player's new
 * tests) or made a call into a changed product file (the call recorder saw one), leaving out the
 * tests the request says passed at the base (the base did not need the change to pass them).
 * How: once the test's own protocol is over (its reports logged, its fixtures torn down as for the
 * next test), the process forks; the child runs the test again with pytest's own protocol, reports
 * not logged, and answers through a pipe, then ends with `os._exit`. The parent waits, writes the
 * answer, and goes on as if nothing ran: a counter the repetition moved, a file it wrote in its own
 * temporary directory, a fixture it set up again stay in the child. A test that needs the state the
 * first run left (a counter, a first-call toggle) fails there, whatever the state's name or place.
 * The repetitions take at most 15% of the run's own time past a 0.5 s floor; a test left out for that is
 * named (over_budget), so the evaluation says what was not repeated.
 */
export const PYTHON_REPEAT_SOURCE = String.raw`
REPEAT_SECONDS = 60
# The repetitions' share of the run's time, past a floor: where the base's results are not known
# when the run starts (a first turn), every passing test that called the change is a candidate.
BUDGET_SHARE = 0.15
BUDGET_FLOOR = 0.5

def test_repeater(config, recorder, pytest):
    # The pytest plugin that repeats the tests the request asks for, or None when it asks for none.
    if not config.get('repeated') or not hasattr(os, 'fork'):
        return None
    from _pytest.runner import runtestprotocol
    files = frozenset(config.get('repeat_files', ()))
    passed_at_base = frozenset(config.get('passed_at_base', ()))
    out = open(config['repeated'], 'w', encoding='utf-8')
    clock = time.monotonic
    started, spent = clock(), [0.0]

    def again(item):
        # The child's answer: 'passed', 'failed' with pytest's message, or None (it did not answer).
        sys.stdout.flush()
        sys.stderr.flush()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read)
                # Nothing of the repetition reaches the run's output, captured by pytest or not.
                quiet = os.open(os.devnull, os.O_WRONLY)
                os.dup2(quiet, 1)
                os.dup2(quiet, 2)
                import signal
                signal.alarm(REPEAT_SECONDS)
                if recorder:
                    recorder.stop()
                    recorder.count = CALL_LIMIT  # the child records nothing
                reports = runtestprotocol(item, log=False, nextitem=item)
                failed = [report for report in reports if report.failed]
                called = any(report.when == 'call' and report.passed for report in reports)
                answer = {'outcome': 'passed' if called and not failed else 'failed'}
                if failed:
                    answer['message'] = failure_message(failed[0].longreprtext)
                os.write(write, json.dumps(answer).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read, 'rb') as pipe:
            text = pipe.read()
        os.waitpid(pid, 0)
        return json.loads(text) if text else None

    class CoachgateRepeat:
        def __init__(self):
            self.passed = False

        def pytest_runtest_logreport(self, report):
            # Passed: its call passed, and no phase failed.
            if report.when == 'call':
                self.passed = report.passed
            if report.failed:
                self.passed = False

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            self.passed = False
            if recorder:
                recorder.touched = False
            yield
            touched = recorder is not None and recorder.touched
            where = str(getattr(item, 'path', None) or item.fspath)
            chosen = touched or os.path.realpath(where) in files
            if not self.passed or not chosen or item.nodeid in passed_at_base:
                return
            if spent[0] > BUDGET_SHARE * (clock() - started - spent[0]) + BUDGET_FLOOR:
                answer = {'outcome': 'over_budget'}
            else:
                before = clock()
                answer = again(item) or {'outcome': 'unfinished'}
                spent[0] += clock() - before
            answer['test'] = item.nodeid
            out.write(json.dumps(answer) + '\n')
            out.flush()

        def pytest_sessionfinish(self):
            out.close()
    return CoachgateRepeat()
`;
