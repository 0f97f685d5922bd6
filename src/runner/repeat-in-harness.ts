/**
 * Python the pytest and unittest reporters carry to run, during a trusted run, each test that may
 * show the Player's change a second time in the same process state (src/observation/repetition.ts
 * reads the answers). Active only when the server's request in the run's report directory asks
 * for it (`coachgate_observe.json`), so nothing the tests see changes.
 *
 * Which tests: those that passed and belong to the files the request names (the Player's new
 * tests), or where it names none, that made a call into a changed product file (pytest: the call
 * recorder saw one; unittest, which records no calls: every passing test), leaving out the tests the request says passed at
 * the base (the base did not need the change to pass them).
 * How: once the test is over (pytest: its reports logged, its fixtures torn down as for the next
 * test; unittest: its result recorded, its class still set up), the process forks; the child runs the test again with the runner's own protocol, its
 * result kept from the run's, and answers through a pipe, then ends with `os._exit`. The parent waits, writes the
 * answer, and goes on as if nothing ran: a counter the repetition moved, a file it wrote in its own
 * temporary directory, a fixture it set up again stay in the child. A test that needs the state the
 * first run left (a counter, a first-call toggle) fails there, whatever the state's name or place.
 * The repetitions take at most 10% of the run's own CPU time past a 0.3 s floor; a test left out
 * for that are counted (over_budget), so the evaluation says how many were not repeated.
 */
export const PYTHON_REPEAT_SOURCE = String.raw`
import json, os, sys

REPEAT_SECONDS = 60
# The repetitions' share of the run's CPU time, past a floor: where the base's results are unknown
# when the run starts (a first turn), every passing test that called the change is a candidate.
BUDGET_SHARE = 0.1
BUDGET_FLOOR = 0.3

def observe_request(directory):
    # The server's request for this run (recording, repetition), or None for every run without one.
    config_path = os.path.join(directory, 'coachgate_observe.json')
    if not os.path.exists(config_path):
        return None
    with open(config_path, encoding='utf-8') as handle:
        return json.load(handle)

class Repeater:
    # Runs a passed test again in a fork of this process and writes the answer; None when the
    # request asks for no repetition (or the platform cannot fork).
    def __new__(cls, config):
        if not config or not config.get('repeated') or not hasattr(os, 'fork'):
            return None
        return super().__new__(cls)

    def __init__(self, config):
        files = config.get('repeat_files')
        self.files = None if files is None else frozenset(files)
        self.passed_at_base = frozenset(config.get('passed_at_base', ()))
        self.out = open(config['repeated'], 'w', encoding='utf-8')
        self.started, self.spent = cpu_seconds(), 0.0  # both with the children's
        self.over_budget = 0

    def chosen(self, test_id, test_file, touched):
        # The request's files when it names some, else the tests that called the change.
        if test_id in self.passed_at_base:
            return False
        if self.files is None:
            return touched
        return os.path.realpath(test_file or '') in self.files

    def affordable(self):
        own = cpu_seconds() - self.started - self.spent  # the run's, the repetitions' left out
        return self.spent <= BUDGET_SHARE * own + BUDGET_FLOOR

    def repeat(self, test_id, run_again):
        # run_again() runs in the child and returns (passed, message).
        if not self.affordable():
            self.over_budget += 1
            return
        before = cpu_seconds()
        answer = in_child(run_again) or {'outcome': 'unfinished'}
        self.spent += cpu_seconds() - before
        answer['test'] = test_id
        self.write(answer)

    def in_other_order(self, other, ids):
        # The chosen tests once more from the session's start, reversed (src/runner/other-order.ts).
        if not self.affordable():
            self.over_budget += len(ids)
            ids = []
        before = cpu_seconds()
        answers = other.finish(ids)
        self.spent += cpu_seconds() - before
        for answer in answers:
            answer['order'] = 'reversed'
            self.write(answer)

    def write(self, answer):
        self.out.write(json.dumps(answer) + '\n')
        self.out.flush()

    def close(self):
        if self.over_budget:
            self.out.write(json.dumps({'outcome': 'over_budget', 'count': self.over_budget}) + '\n')
        self.out.close()

def cpu_seconds():
    # CPU time, not wall time: the share holds on a loaded machine as on an idle one. The children
    # waited for count: the repetitions, and the processes the tests start.
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system

def in_child(run_again):
    # The child's answer, or None when it gave none (it ended itself, or ran out of time).
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            # Nothing of the repetition reaches the run's output, captured by the runner or not.
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            import signal
            signal.alarm(REPEAT_SECONDS)
            passed, message = run_again()
            answer = {'outcome': 'passed' if passed else 'failed'}
            if message:
                answer['message'] = message
            os.write(write, json.dumps(answer).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, 'rb') as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else None

def pytest_repeater(config, recorder, pytest):
    # The pytest plugin that repeats the tests the request asks for, or None when it asks for none.
    repeater = Repeater(config)
    if repeater is None:
        return None
    from _pytest.runner import runtestprotocol

    def run_again(item):
        if recorder:
            recorder.stop()
            recorder.count = CALL_LIMIT  # the child records nothing
        reports = runtestprotocol(item, log=False, nextitem=item)
        failed = [report for report in reports if report.failed]
        called = any(report.when == 'call' and report.passed for report in reports)
        return called and not failed, failed and failure_message(failed[0].longreprtext)

    class CoachgateRepeat:
        def __init__(self):
            self.passed = False
            self.chosen = []  # the ids repeated, in the order they ran
            self.other = None

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtestloop(self, session):
            # Forked before the first test: the state the chosen tests meet in another order. Only
            # the base's tests (the trusted run): the Player's own may honestly lean on their order.
            if repeater.files is None and session.items and not session.config.option.collectonly:
                self.other = pytest_other_order(session, recorder)
            yield

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
            if self.passed and repeater.chosen(item.nodeid, where, touched):
                self.chosen.append(item.nodeid)
                repeater.repeat(item.nodeid, lambda: run_again(item))

        def pytest_sessionfinish(self):
            if self.other:
                repeater.in_other_order(self.other, self.chosen)
            repeater.close()
    return CoachgateRepeat()
`;
