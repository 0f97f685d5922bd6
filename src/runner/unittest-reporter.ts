import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HARNESS_CHANGED } from './harness-case.js';
import { PYTHON_HARNESS_SOURCE } from './python-harness.js';
import { PYTHON_REPEAT_SOURCE } from './repeat-in-harness.js';

/**
 * unittest's results recorded beside the result class's own work, shared by the direct reporter and
 * the wrapped-run hook (unittest-shims.ts). The harness is read as it loads and checked after each
 * test, as the pytest reporter does (python-harness.ts): a replaced one becomes an error case
 * naming it. The report is written when the run stops, merged with what earlier unittest runs of
 * the same command wrote (`python -m unittest a && … b`). `RecordingMixin.report_path` names the
 * file.
 */
export const UNITTEST_RECORDING_SOURCE = String.raw`
import os, traceback, unittest
from xml.sax.saxutils import quoteattr, escape
${PYTHON_HARNESS_SOURCE}
# Read as the recorder loads, before unittest imports a test module or the code under test.
HARNESS = harness_entries()
HARNESS_INTACT = harness_intact(HARNESS)

REPORT_OPEN = '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="">\n'
REPORT_CLOSE = '</testsuite></testsuites>\n'

class RecordingMixin:
    report_path = None
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
 * the tests that may show the Player's change run a second time (src/runner/repeat-in-harness.ts).
 */
const REPORTER_SOURCE = String.raw`
import os, sys
sys.path.insert(0, os.getcwd())
${UNITTEST_RECORDING_SOURCE}
${PYTHON_REPEAT_SOURCE}
RecordingMixin.report_path, args = sys.argv[1], sys.argv[2:]
# In a trusted run the server asks for, the tests that may show the change run a second time.
RepeatingMixin.repeater = Repeater(observe_request(os.path.dirname(os.path.abspath(__file__))))

class RecordingResult(RepeatingMixin, RecordingMixin, unittest.TextTestResult):
    pass

runner = unittest.TextTestRunner(resultclass=RecordingResult, verbosity=2)
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
