import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EQUALITY_WATCH_SOURCE } from './equality-watch.js';
import {
  endedCase,
  EQUALITY_MESSAGE_TEMPLATE,
  HARNESS_CHANGED,
  OUTSIDE_PROJECT,
} from './harness-case.js';
import { PYTHON_PROCESS_END_SOURCE } from './process-end-watch.js';
import { PYTHON_HARNESS_SOURCE } from './python-harness.js';
import { PYTHON_REPEAT_SOURCE } from './repeat-in-harness.js';
import { CALL_RECORDER_SOURCE } from './call-recorder.js';
import { ORACLE_WATCH_SOURCE } from './oracle-watch.js';
import { PYTHON_OTHER_ORDER_SOURCE } from './other-order.js';

/**
 * unittest's results recorded beside the result class's own work, shared by the direct reporter and
 * the wrapped-run hook (unittest-shims.ts). The harness is read as it loads and checked after each
 * test, as the pytest reporter does (python-harness.ts): a replaced one becomes an error case
 * naming it. A call that ends the process (process-end-watch.ts) writes the report at once, with
 * an error case naming the project's file and line that made it. The report is written when the run stops, merged with what earlier unittest runs of
 * the same command wrote (`python -m unittest a && … b`). `RecordingMixin.report_path` names the
 * file.
 */
const ENDED = endedCase('{call}', '{where}', '{test}');

export const UNITTEST_RECORDING_SOURCE = String.raw`
import os, sys, traceback, unittest
from xml.sax.saxutils import quoteattr, escape
${PYTHON_HARNESS_SOURCE}
${PYTHON_PROCESS_END_SOURCE}
# Read as the recorder loads, before unittest imports a test module or the code under test.
HARNESS = harness_entries()
HARNESS_INTACT = harness_intact(HARNESS)
# The result recording and the test it runs, for a call that ends the process.
RUNNING = [None, None]

def process_ended(call, file, line):
    # The report is written now, with the case the ended process becomes: nothing runs after it.
    where = '%s:%s' % (file, '?' if line is None else line) if file else ${JSON.stringify(OUTSIDE_PROJECT)}
    fill = lambda text: (text.replace('{call}', call).replace('{where}', where)
                         .replace('{test}', RUNNING[1] or 'no test'))
    result = RUNNING[0]
    cases = result.__dict__.setdefault('recorded_cases', []) if result else []
    cases.append((fill(${JSON.stringify(ENDED.id)}), 'error', fill(${JSON.stringify(ENDED.message)})))
    write_report(RecordingMixin.report_path, cases)

watch_process_end(process_ended)

REPORT_OPEN = '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="">\n'
REPORT_CLOSE = '</testsuite></testsuites>\n'

class RecordingMixin:
    report_path = None
    def startTest(self, test):
        RUNNING[:] = [self, test.id()]
        super().startTest(test)
    def record(self, test, outcome, text=None, err=None):
        # The exception line (with unittest's diff) first: it is what a short message should show.
        lead = ''.join(traceback.format_exception_only(*err[:2])).strip() if err else (text or '')
        cases = self.__dict__.setdefault('recorded_cases', [])
        cases.append((test.id(), outcome, lead + '\n' + (text or '') if err else text))
    def addSuccess(self, test):
        super().addSuccess(test); self.record(test, None)
    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.record(test, 'failure', self._exc_info_to_string(err, test), err)
    def addError(self, test, err):
        super().addError(test, err)
        self.record(test, 'error', self._exc_info_to_string(err, test), err)
    def addSkip(self, test, reason):
        super().addSkip(test, reason); self.record(test, 'skipped', reason)
    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err); self.record(test, None)
    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test); self.record(test, 'failure', 'unexpected success')
    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = 'failure' if issubclass(err[0], test.failureException) else 'error'
            self.record(subtest, kind, self._exc_info_to_string(err, test), err)
    def stopTest(self, test):
        super().stopTest(test)
        RUNNING[1] = None
        told = self.__dict__.setdefault('harness_told', set())
        changed = harness_replaced(HARNESS, HARNESS_INTACT, told)
        if changed:
            # An error case no test id hides, as in pytest's reports.
            cases = self.__dict__.setdefault('recorded_cases', [])
            message = harness_message(test.id(), changed)
            cases.append((${JSON.stringify(HARNESS_CHANGED)}, 'error', message))
    def stopTestRun(self):
        super().stopTestRun()
        write_report(self.report_path, self.__dict__.get('recorded_cases', []))
        RUNNING[:] = [None, None]  # written: a later end (an atexit handler) adds its case alone

def write_report(report_path, cases):
    previous = ''
    if os.path.exists(report_path):
        with open(report_path, encoding='utf-8') as report:
            previous = report.read()
    whole = previous.startswith(REPORT_OPEN) and previous.endswith(REPORT_CLOSE)
    with open(report_path, 'w', encoding='utf-8') as report:
        report.write(REPORT_OPEN + (previous[len(REPORT_OPEN):-len(REPORT_CLOSE)] if whole else ''))
        for test_id, outcome, text in cases:
            report.write('<testcase name=%s>' % quoteattr(test_id))
            if outcome:
                first = (text or '').strip().split('\n')[0]
                body = escape(text or '')
                message = quoteattr(first[:300])
                report.write('<%s message=%s>%s</%s>' % (outcome, message, body, outcome))
            report.write('</testcase>\n')
        report.write(REPORT_CLOSE)
`;

/**
 * A small `python -m unittest` stand-in that also writes a JUnit report: same discovery, same
 * arguments, same console output (verbosity 2), same exit codes. It runs the project's own loader,
 * so `load_tests()` (doctests, custom suites) is honoured, unlike pytest. Ids are unittest ids
 * (`package.module.Class.test_name`), which `python -m unittest <id>` selects. In a trusted run,
 * the tests' calls into the Player's changed files are recorded (src/runner/call-recorder.ts) and
 * the tests that may show the change run a second time (src/runner/repeat-in-harness.ts).
 */
const REPORTER_SOURCE = String.raw`
import os, sys
sys.path.insert(0, os.getcwd())
import re
${UNITTEST_RECORDING_SOURCE}
${EQUALITY_WATCH_SOURCE}
${CALL_RECORDER_SOURCE}
${ORACLE_WATCH_SOURCE}
${PYTHON_REPEAT_SOURCE}
${PYTHON_OTHER_ORDER_SOURCE}
RecordingMixin.report_path, args = sys.argv[1], sys.argv[2:]
# In a trusted run, assertEqual's passing comparisons decided by a changed type are judged again.
equality = []
watch = equality_watch(os.path.dirname(os.path.abspath(__file__)), equality.append)

class ObservingMixin:
    # In a trusted run the server asks for: the calls each test makes into the Player's changed
    # files are recorded (the same recorder and record as under pytest), and a test that passed
    # runs a second time once its result is recorded, its class still set up.
    recorder = None
    repeater = None
    suite = None  # the suite the runner runs: the other order's child runs its cases

    def startTestRun(self):
        super().startTestRun()
        # Forked before the first test: the state the chosen tests meet in another order. Only
        # the base's tests (the trusted run): the Player's own may honestly lean on their order.
        repeater = self.repeater
        if repeater is not None and repeater.files is None and self.suite is not None:
            self.__dict__['other'] = unittest_other_order(self.suite, self.recorder)

    def startTest(self, test):
        super().startTest(test)
        if self.recorder:
            self.recorder.test = test.id()
            self.recorder.touched = False
            self.recorder.start()

    def addSuccess(self, test):
        oracle = self.recorder and self.recorder.oracle
        failure = oracle and oracle.failure(test.id())
        if failure:
            # The base's copy of the test's judge said otherwise (src/runner/oracle-watch.ts).
            try:
                raise AssertionError(failure)
            except AssertionError:
                self.addFailure(test, sys.exc_info())
            return
        super().addSuccess(test)
        self.__dict__['succeeded'] = True

    def stopTest(self, test):
        recorder, repeater = self.recorder, self.repeater
        if recorder:
            recorder.stop()
        succeeded = self.__dict__.pop('succeeded', False)
        super().stopTest(test)
        if not succeeded or repeater is None:
            return
        touched = recorder is None or recorder.touched
        module = sys.modules.get(type(test).__module__)
        if repeater.chosen(test.id(), getattr(module, '__file__', None), touched):
            self.__dict__.setdefault('chosen', []).append(test.id())
            repeater.repeat(test.id(), lambda: unittest_again(test, recorder))

    def stopTestRun(self):
        super().stopTestRun()
        if self.recorder:
            self.recorder.finish()
        if self.repeater:
            other = self.__dict__.get('other')
            if other:
                self.repeater.in_other_order(other, self.__dict__.get('chosen', []))
            self.repeater.close()

def unittest_again(test, recorder):
    if recorder:
        recorder.count = CALL_LIMIT  # the child records nothing
    result = unittest.TestResult()
    test.run(result)
    problems = result.failures + result.errors + [
        (case, 'unexpected success') for case in result.unexpectedSuccesses]
    passed = not problems and not result.skipped and result.testsRun == 1
    return passed, problems and problems[0][1].strip().split('\n')[-1][:2000]

observed = observe_request(os.path.dirname(os.path.abspath(__file__))) or {}
ObservingMixin.recorder = call_recorder(observed)
ObservingMixin.repeater = Repeater(observed)

class RecordingResult(ObservingMixin, RecordingMixin, unittest.TextTestResult):
    def startTest(self, test):
        super().startTest(test)
        if watch:
            watch.start(test.id())
    def stopTestRun(self):
        cases = self.__dict__.setdefault('recorded_cases', [])
        for message in equality_cases(equality, ${JSON.stringify(EQUALITY_MESSAGE_TEMPLATE)}):
            cases.append((${JSON.stringify(HARNESS_CHANGED)}, 'error', message))
        super().stopTestRun()

class SuiteRunner(unittest.TextTestRunner):
    def run(self, test):
        ObservingMixin.suite = test
        return super().run(test)

runner = SuiteRunner(resultclass=RecordingResult, verbosity=2)
argv = ['python -m unittest'] + args
program = unittest.main(module=None, argv=argv, testRunner=runner, exit=False)
result = program.result
if result.testsRun == 0 and not result.skipped:
    sys.exit(5)
sys.exit(0 if result.wasSuccessful() else 1)
`;

export const UNITTEST_REPORTER_FILE = 'coachgate_unittest.py';

/** Puts the reporter in the run's report directory, where the unittest invocation expects it. */
export async function writeUnittestReporter(reportDirectory: string): Promise<void> {
  await writeFile(path.join(reportDirectory, UNITTEST_REPORTER_FILE), REPORTER_SOURCE);
}
