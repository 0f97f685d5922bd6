import { createRequire } from 'node:module';
import type { XMLParser as XMLParserType } from 'fast-xml-parser';
import { clipMessage } from './text.js';
import type { TestCaseResult, TestStatus } from './types.js';

/**
 * JUnit XML as written by pytest `--junitxml`, node's `--test-reporter=junit`, vitest
 * `--reporter=junit` and most other runners. Ids follow what a user of that runner would write:
 * pytest node ids (`tests/test_x.py::TestClass::test_name`), node's `suite > name` (the same on
 * Node 20, 22 and 24), Maven Surefire's `package.Class#method`, otherwise `file > suite > name` (the file
 * when the report names one).
 */
export function parseJUnitXml(
  xml: string,
  format: 'junit' | 'surefire' = 'junit',
): TestCaseResult[] {
  // A truncated report (runner killed mid-write) must not silently read as fewer tests.
  const { XMLValidator } = fastXmlParser();
  const validation = XMLValidator.validate(xml);
  if (validation !== true) {
    const { msg, line } = validation.err;
    throw new Error(`JUnit report is not well-formed XML (line ${line}): ${msg}`);
  }
  const document = parser().parse(xml) as XmlNode[];
  const node = isNodeTestReport(xml);
  if (node) undoNodeQuoteEscape(document);
  const testId =
    format === 'surefire'
      ? surefireTestId
      : isPytestReport(document)
        ? pytestTestId
        : node
          ? nodeTestId
          : isMochaReport(document)
            ? mochaTestId
            : suitePathTestId;
  const results: TestCaseResult[] = [];
  collectTestCases(document, [], (testcase, suitePath) => {
    const result = toResult(testcase, testId(attributesOf(testcase), suitePath));
    if (!(
      node &&
      result.status === 'passed' &&
      isNodeFileEntry(attributesOf(testcase), suitePath)
    )) {
      results.push(result);
    }
  });
  return results;
}

/** `package.Class#method`, what `mvn test -Dtest=` selects. */
function surefireTestId(attributes: Attributes): string {
  return `${attributes.classname ?? ''}#${attributes.name ?? ''}`;
}

/** mocha's xunit reporter: one `<testsuite name="Mocha Tests">`. */
function isMochaReport(document: XmlNode[]): boolean {
  return document.some(
    (node) => tagOf(node) === 'testsuite' && attributesOf(node).name === 'Mocha Tests',
  );
}

/** `describe path > test`: mocha's classname is the parents' titles, its name the test's own title. */
function mochaTestId(attributes: Attributes): string {
  return [attributes.classname ?? '', attributes.name ?? '']
    .filter((part) => part !== '')
    .join(' > ');
}

/** Node's reporter (20, 22 and 24) ends its report with these counter comments; no other runner does. */
function isNodeTestReport(xml: string): boolean {
  return /<!-- suites \d+ -->/.test(xml) && /<!-- todo \d+ -->/.test(xml);
}

/**
 * Node reports every test file as a top-level "test" named by its path (absolute on Node 20, relative
 * on 22 and 24, which also add a `file` attribute), passing even when the file defines no test.
 * Counting it would turn "no tests" into a pass. A file that failed to load stays: it carries the error.
 */
function isNodeFileEntry(attributes: Attributes, suitePath: string[]): boolean {
  const name = attributes.name ?? '';
  if (suitePath.length > 0 || /\s/.test(name) || !looksLikeFilePath(name)) return false;
  const file = attributes.file;
  return file === undefined || file === name || file.endsWith(`/${name}`);
}

/**
 * Node's reporter (20, 22 and 24) writes `"` in an attribute as `&quot;` and then escapes its `&`
 * again (`&amp;quot;`), so names, suites and skip reasons read back with a literal `&quot;`.
 */
function undoNodeQuoteEscape(nodes: XmlNode[]): void {
  for (const node of nodes) {
    const attributes = attributesOf(node);
    for (const [key, value] of Object.entries(attributes))
      attributes[key] = value.replaceAll('&quot;', '"');
    undoNodeQuoteEscape(childrenOf(node));
  }
}

/**
 * `suite > name`: Node 24 adds an absolute `file` attribute that 20 and 22 lack; leaving it out keeps
 * the id the same on every Node and in every checkout (it is what `--test-name-pattern` matches).
 */
function nodeTestId(attributes: Attributes, suitePath: string[]): string {
  return [...suitePath, attributes.name ?? ''].filter((part) => part !== '').join(' > ');
}

/** Required on the first report (its CommonJS build loads synchronously), not at server start-up. */
function fastXmlParser(): typeof import('fast-xml-parser') {
  return createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
}

let cachedParser: XMLParserType | undefined;
const parser = () => (cachedParser ??= new (fastXmlParser().XMLParser)(PARSER_OPTIONS));

// preserveOrder keeps document order and makes every child list an array, so a report with a
// single <testcase> or <testsuite> needs no special case.
const PARSER_OPTIONS = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Numeric character references (`&#10;`) appear in messages written by several runners.
  htmlEntities: true,
};

/** One element in fast-xml-parser's ordered form: `{ tag: children, ':@': attributes }` or `{ '#text': text }`. */
type XmlNode = Record<string, unknown>;
type Attributes = Record<string, string>;

const ATTRIBUTES_KEY = ':@';
const TEXT_KEY = '#text';

function tagOf(node: XmlNode): string | undefined {
  return Object.keys(node).find((key) => key !== ATTRIBUTES_KEY);
}

function childrenOf(node: XmlNode): XmlNode[] {
  const tag = tagOf(node);
  const children = tag === undefined ? undefined : node[tag];
  return Array.isArray(children) ? (children as XmlNode[]) : [];
}

function attributesOf(node: XmlNode): Attributes {
  return (node[ATTRIBUTES_KEY] as Attributes | undefined) ?? {};
}

function textOf(node: XmlNode): string {
  return childrenOf(node)
    .map((child) => child[TEXT_KEY])
    .filter((text): text is string => typeof text === 'string')
    .join('');
}

function collectTestCases(
  nodes: XmlNode[],
  suitePath: string[],
  onTestCase: (testcase: XmlNode, suitePath: string[]) => void,
): void {
  for (const node of nodes) {
    const tag = tagOf(node);
    if (tag === 'testcase') onTestCase(node, suitePath);
    else if (tag === 'testsuite') {
      collectTestCases(childrenOf(node), [...suitePath, attributesOf(node).name ?? ''], onTestCase);
    } else if (tag === 'testsuites') collectTestCases(childrenOf(node), suitePath, onTestCase);
  }
}

function isPytestReport(document: XmlNode[]): boolean {
  const root = document.find((node) => tagOf(node) === 'testsuites' || tagOf(node) === 'testsuite');
  if (!root) return false;
  if (attributesOf(root).name === 'pytest tests') return true;
  const suites = tagOf(root) === 'testsuite' ? [root] : childrenOf(root);
  return suites.some(
    (suite) => tagOf(suite) === 'testsuite' && attributesOf(suite).name === 'pytest',
  );
}

/** Outcome elements in the order that decides a testcase's status (a failed test that also errors in teardown is failed). */
const OUTCOME_TAGS: ReadonlyArray<[string, TestStatus]> = [
  ['failure', 'failed'],
  ['error', 'error'],
  ['skipped', 'skipped'],
];

function toResult(testcase: XmlNode, id: string): TestCaseResult {
  const children = childrenOf(testcase);
  for (const [tag, status] of OUTCOME_TAGS) {
    const outcome = children.find((child) => tagOf(child) === tag);
    if (outcome) {
      const message = outcomeMessage(outcome, status);
      return message ? { id, status, message } : { id, status };
    }
  }
  return { id, status: 'passed' };
}

/**
 * pytest's `E   ` lines are the error itself (its message attribute can be just "collection
 * failure"); other runners put the full error in the body. A skip's reason is its message attribute.
 */
function outcomeMessage(outcome: XmlNode, status: TestStatus): string | undefined {
  const body = textOf(outcome).trim();
  const attribute = (attributesOf(outcome).message ?? '').trim();
  const pytestErrorLines = body
    .split('\n')
    .filter((line) => /^E\s/.test(line))
    .map((line) => line.slice(1).trim());
  const candidates =
    status === 'skipped' ? [attribute, body] : [pytestErrorLines.join('\n'), body, attribute];
  const message = candidates.find((candidate) => candidate.length > 0);
  return message === undefined ? undefined : clipMessage(message);
}

/**
 * pytest writes `classname="tests.test_x.TestClass" name="test_name"` (plus `file` with the xunit1
 * family); a collection error has an empty classname and the dotted module as its name.
 */
function pytestTestId(attributes: Attributes): string {
  const name = attributes.name ?? '';
  const classname = attributes.classname ?? '';
  if (classname === '') return dottedModuleToPath(name);
  const segments = classname.split('.');
  const file = attributes.file;
  const fileModule = file?.replace(/\.py$/, '').split('/').join('.');
  let modulePath: string;
  let classes: string[];
  if (file && fileModule && (classname === fileModule || classname.startsWith(`${fileModule}.`))) {
    modulePath = file;
    classes = segments.slice(fileModule.split('.').length);
  } else {
    // Test classes are capitalised (`Test*`); modules are not (`test_*.py`, `*_test.py`).
    let firstClass = segments.length;
    while (firstClass > 1 && /^[A-Z]/.test(segments[firstClass - 1] ?? '')) firstClass -= 1;
    modulePath = dottedModuleToPath(segments.slice(0, firstClass).join('.'));
    classes = segments.slice(firstClass);
  }
  return [modulePath, ...classes, name].join('::');
}

function dottedModuleToPath(dotted: string): string {
  return `${dotted.split('.').join('/')}.py`;
}

/** `file > suite > name`, leaving out parts that repeat the file (vitest names its suites after files). */
function suitePathTestId(attributes: Attributes, suitePath: string[]): string {
  const name = attributes.name ?? '';
  const classname = attributes.classname ?? '';
  const file = attributes.file ?? (looksLikeFilePath(classname) ? classname : undefined);
  const parts = [file, ...suitePath, name].filter(
    (part, index): part is string =>
      part !== undefined && part !== '' && (index === 0 || part !== file),
  );
  return parts.join(' > ');
}

function looksLikeFilePath(text: string): boolean {
  return /[\\/]/.test(text) || /\.[cm]?[jt]sx?$/.test(text);
}
