import { describe, expect, it } from 'vitest';
import { parseJUnitXml } from '../../src/runner/report/junit.js';

// Real pytest, node and vitest reports are parsed in report-pytest/-node-test/-vitest.test.ts;
// these are the shapes those runs do not produce on this machine.
describe('parseJUnitXml', () => {
  it('reads a report holding a single testcase (no array in the parsed tree)', () => {
    const xml =
      '<testsuites><testsuite name="only"><testcase name="works" classname="test"/></testsuite></testsuites>';
    expect(parseJUnitXml(xml)).toEqual([{ id: 'only > works', status: 'passed' }]);
  });

  it('keeps document order across nested suites and testcases directly under <testsuites>', () => {
    const xml = [
      '<testsuites>',
      '<testcase name="first" classname="test"/>',
      '<testsuite name="outer"><testsuite name="inner"><testcase name="deep" classname="test"/></testsuite>',
      '<testcase name="shallow" classname="test"><failure message="nope">AssertionError: nope</failure></testcase></testsuite>',
      '<testcase name="last" classname="test"><skipped/></testcase>',
      '</testsuites>',
    ].join('');
    expect(parseJUnitXml(xml)).toEqual([
      { id: 'first', status: 'passed' },
      { id: 'outer > inner > deep', status: 'passed' },
      { id: 'outer > shallow', status: 'failed', message: 'AssertionError: nope' },
      { id: 'last', status: 'skipped' },
    ]);
  });

  it('uses pytest xunit1 file attributes, nested classes and parametrised names for node ids', () => {
    const xml = [
      '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest">',
      '<testcase classname="tests.api.test_users.TestCreate.TestValidation" name="test_rejects[empty-name]" file="tests/api/test_users.py" line="9"/>',
      '<testcase classname="tests.api.test_users" name="test_lists[1-2]"/>',
      '<testcase classname="test_root" name="test_at_root"/>',
      '</testsuite></testsuites>',
    ].join('');
    expect(parseJUnitXml(xml).map((test) => test.id)).toEqual([
      'tests/api/test_users.py::TestCreate::TestValidation::test_rejects[empty-name]',
      'tests/api/test_users.py::test_lists[1-2]',
      'test_root.py::test_at_root',
    ]);
  });

  it('prefers failure over error (a failing test that also errors in teardown is failed)', () => {
    const xml =
      '<testsuite name="pytest"><testcase classname="tests.test_a" name="test_x">' +
      '<failure message="assert 1 == 2">E   assert 1 == 2</failure><error message="teardown">E   RuntimeError: teardown</error>' +
      '</testcase></testsuite>';
    expect(parseJUnitXml(xml)).toEqual([
      { id: 'tests/test_a.py::test_x', status: 'failed', message: 'assert 1 == 2' },
    ]);
  });

  it('decodes CDATA, character references and pytest-escaped colour codes in messages, and clips them', () => {
    const long = 'x'.repeat(1000);
    const xml =
      '<testsuites><testsuite name="s">' +
      '<testcase name="a" classname="src/a.test.ts"><failure><![CDATA[Error: <boom> & more]]></failure></testcase>' +
      '<testcase name="b" classname="src/a.test.ts"><failure message="line one&#10;line &#x32;"/></testcase>' +
      '<testcase name="c" classname="src/a.test.ts"><error message="#x1B[31mred#x1B[0m"/></testcase>' +
      `<testcase name="d" classname="src/a.test.ts"><failure>${long}</failure></testcase>` +
      '</testsuite></testsuites>';
    const [a, b, c, d] = parseJUnitXml(xml);
    expect(a).toEqual({
      id: 'src/a.test.ts > s > a',
      status: 'failed',
      message: 'Error: <boom> & more',
    });
    expect(b?.message).toBe('line one\nline 2');
    expect(c).toEqual({ id: 'src/a.test.ts > s > c', status: 'error', message: 'red' });
    expect(d?.message?.length).toBeLessThanOrEqual(300);
  });

  it('refuses a truncated report instead of reading it as fewer tests', () => {
    const truncated =
      '<testsuites><testsuite name="s"><testcase name="a"/><testcase name="b"><failure message="x">';
    expect(() => parseJUnitXml(truncated)).toThrow(/not well-formed XML \(line 1\)/);
  });

  it('reads an empty suite as no tests', () => {
    expect(
      parseJUnitXml(
        '<testsuites name="pytest tests"><testsuite name="pytest" tests="0"/></testsuites>',
      ),
    ).toEqual([]);
  });
});
