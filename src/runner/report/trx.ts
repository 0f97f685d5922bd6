import { createRequire } from 'node:module';
import { clipMessage } from './text.js';
import type { TestCaseResult, TestStatus } from './types.js';

interface TrxResult {
  testId?: string;
  testName?: string;
  outcome?: string;
  Output?: { ErrorInfo?: { Message?: unknown; StackTrace?: unknown }; StdOut?: unknown };
}

interface TrxDocument {
  TestRun?: {
    Results?: { UnitTestResult?: TrxResult[] };
    TestDefinitions?: {
      UnitTest?: Array<{ id?: string; TestMethod?: { className?: string; name?: string } }>;
    };
  };
}

/** TRX outcomes (the VSTest schema's list) as coachgate's statuses; anything unknown is an error. */
const OUTCOME: Record<string, TestStatus> = {
  Passed: 'passed',
  PassedButRunAborted: 'passed',
  Warning: 'passed',
  Failed: 'failed',
  NotExecuted: 'skipped',
  NotRunnable: 'skipped',
  Inconclusive: 'skipped',
  Pending: 'skipped',
  Disconnected: 'skipped',
};

/**
 * A Visual Studio test results file (`dotnet test --logger trx`). Ids are `Namespace.Class.Method`, what
 * `dotnet test --filter FullyQualifiedName=` takes: xUnit writes that as the test name, MSTest writes only
 * the method there, so the definition's class and method are preferred.
 */
export function parseTrx(xml: string): TestCaseResult[] {
  const fastXml = createRequire(import.meta.url)(
    'fast-xml-parser',
  ) as typeof import('fast-xml-parser');
  const validation = fastXml.XMLValidator.validate(xml);
  if (validation !== true)
    throw new Error(`TRX report is not well-formed XML (line ${validation.err.line})`);
  const document = new fastXml.XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name) => name === 'UnitTestResult' || name === 'UnitTest',
  }).parse(xml) as TrxDocument;
  const run = document.TestRun;
  if (!run) throw new Error('TRX report has no <TestRun>');
  const methods = new Map(
    (run.TestDefinitions?.UnitTest ?? []).map((test) => [test.id, test.TestMethod]),
  );
  return (run.Results?.UnitTestResult ?? []).map((result) => {
    const method = methods.get(result.testId);
    const qualified =
      method?.className && method.name
        ? `${method.className.split(',')[0]!.trim()}.${method.name}`
        : undefined;
    const id = qualified ?? result.testName ?? '';
    const status = OUTCOME[result.outcome ?? ''] ?? 'error';
    const error = result.Output?.ErrorInfo;
    const text = [error?.Message, error?.StackTrace]
      .filter((part): part is string => typeof part === 'string' && part.trim() !== '')
      .join('\n');
    return status === 'passed' || text === ''
      ? { id, status }
      : { id, status, message: clipMessage(text) };
  });
}
