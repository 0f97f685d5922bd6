/**
 * Python the pytest and unittest reporters carry to run, in a trusted run, the tests the repeater chose
 * (src/runner/repeat-in-harness.ts: passed, may show the Player's change, did not pass at the
 * base) once more in another order: from the session's start, before any test ran, in reverse
 * order. A test that passed in order and fails there needed what the tests before it left behind
 * (a call they made first, a counter they moved), whatever holds it.
 *
 * How: when the session's test loop starts, the process forks; the child waits on a pipe, its
 * state the one the first test met. Once the run is over, the parent sends the chosen tests' ids,
 * in the order they ran; the child runs them reversed with the runner's own protocol (pytest's
 * setup and teardown as between neighbours; unittest's suite, with its class and module fixtures),
 * its results kept from the run's, answers one JSON line per test
 * through a second pipe, and ends with `os._exit`. A run that chose no test sends none: the child
 * ends at once. The child's time counts in the repetitions' share of the run's CPU time.
 */
export const PYTHON_OTHER_ORDER_SOURCE = String.raw`
class OtherOrder:
    def __init__(self, run_tests):
        # run_tests(ids) runs in the child and yields one answer per test it ran.
        sys.stdout.flush()
        sys.stderr.flush()
        tests_read, self.tests = os.pipe()
        self.answers, answers_write = os.pipe()
        # A fork of the run's own process: it stays in the run's sandbox, as the repeater's do.
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(self.tests)
                os.close(self.answers)
                # Nothing of the child reaches the run's output, nor holds it open while it waits.
                quiet = os.open(os.devnull, os.O_WRONLY)
                os.dup2(quiet, 1)
                os.dup2(quiet, 2)
                with os.fdopen(tests_read, 'rb') as pipe:
                    ids = json.loads(pipe.read() or b'[]')
                if ids:
                    import signal
                    signal.alarm(REPEAT_SECONDS)
                    for answer in run_tests(ids):
                        os.write(answers_write, (json.dumps(answer) + '\n').encode())
            finally:
                os._exit(0)
        os.close(tests_read)
        os.close(answers_write)

    def finish(self, ids):
        # The child's answer for each of ids run reversed (unfinished where it gave none).
        with os.fdopen(self.tests, 'wb') as pipe:
            pipe.write(json.dumps(ids).encode())
        with os.fdopen(self.answers, 'rb') as pipe:
            text = pipe.read().decode()
        os.waitpid(self.pid, 0)
        found = {}
        for line in text.split('\n')[:-1]:
            answer = json.loads(line)
            found[answer['test']] = answer
        return [found.get(test) or {'test': test, 'outcome': 'unfinished'} for test in ids]

def pytest_other_order(session, recorder):
    # The child's runs: the session's items named by ids, reversed, each with its next as pytest's.
    from _pytest.runner import runtestprotocol
    def run_tests(ids):
        if recorder:
            recorder.stop()
            recorder.count = CALL_LIMIT  # the child records nothing
        by_id = {item.nodeid: item for item in session.items}
        items = [by_id[test] for test in reversed(ids) if test in by_id]
        for index, item in enumerate(items):
            following = items[index + 1] if index + 1 < len(items) else None
            reports = runtestprotocol(item, log=False, nextitem=following)
            failed = [report for report in reports if report.failed]
            called = any(report.when == 'call' and report.passed for report in reports)
            answer = {'test': item.nodeid, 'outcome': 'passed' if called and not failed
                      else 'failed'}
            if failed:
                answer['message'] = failure_message(failed[0].longreprtext)
            yield answer
    return OtherOrder(run_tests)

def unittest_other_order(suite, recorder):
    # The child's runs: the suite's cases named by ids, reversed, in a suite of their own (its
    # class and module fixtures set up as unittest does between neighbours).
    import unittest
    def run_tests(ids):
        if recorder:
            recorder.stop()
            recorder.count = CALL_LIMIT  # the child records nothing
        cases = {}
        def walk(test):
            if isinstance(test, unittest.TestSuite):
                for inner in test:
                    walk(inner)
            else:
                cases.setdefault(test.id(), test)
        walk(suite)
        chosen = [cases[test] for test in reversed(ids) if test in cases]
        result = unittest.TestResult()
        unittest.TestSuite(chosen).run(result)
        problems = {}
        for case, text in result.failures + result.errors:
            problems.setdefault(case.id(), text.strip().split('\n')[-1][:2000])
        for case in result.unexpectedSuccesses:
            problems.setdefault(case.id(), 'unexpected success')
        for case in chosen:
            message = problems.get(case.id())
            answer = {'test': case.id(), 'outcome': 'failed' if message else 'passed'}
            if message:
                answer['message'] = message
            yield answer
    return OtherOrder(run_tests)
`;
