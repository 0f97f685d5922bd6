import { describe, expect, it } from 'vitest';
import { parseTrx } from '../../src/runner/report/trx.js';

// dotnet is not installed here; the xUnit shape is read end to end in run-independent-tests.test.ts.
describe('parseTrx', () => {
  it('names an MSTest result (method only in testName) by its definition: Namespace.Class.Method', () => {
    const xml = [
      '<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>',
      '<UnitTestResult testId="t1" testName="Breaks" outcome="Failed"><Output><ErrorInfo>',
      '<Message>Assert.AreEqual failed. Expected:&lt;3&gt;. Actual:&lt;2&gt;.</Message>',
      '</ErrorInfo></Output></UnitTestResult>',
      '<UnitTestResult testId="t2" testName="Hangs" outcome="Timeout" />',
      '</Results><TestDefinitions>',
      '<UnitTest name="Breaks" id="t1"><TestMethod className="Demo.SumTests, Demo.Tests, Version=1.0.0.0" name="Breaks" /></UnitTest>',
      '</TestDefinitions></TestRun>',
    ].join('');
    expect(parseTrx(xml)).toEqual([
      {
        id: 'Demo.SumTests.Breaks',
        status: 'failed',
        message: 'Assert.AreEqual failed. Expected:<3>. Actual:<2>.',
      },
      { id: 'Hangs', status: 'error' },
    ]);
  });

  it('refuses a truncated file rather than reading fewer tests', () => {
    expect(() =>
      parseTrx('<TestRun><Results><UnitTestResult testName="a" outcome="Passed"'),
    ).toThrow(/not well-formed/);
  });
});
