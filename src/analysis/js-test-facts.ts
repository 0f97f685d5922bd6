import { createHash } from 'node:crypto';
import type TS from 'typescript';
import type { TestCase, TestFileFacts } from '../integrity/integrity.js';
import { typescript } from './typescript-parser.js';

/** The compiler, loaded on first use (see typescript-parser.ts); callers await loadTypeScript() first. */
const ts = new Proxy({} as typeof TS, {
  get: (_target, key) => typescript()[key as keyof typeof TS],
});

/** Functions that declare tests and suites in vitest, jest, mocha, jasmine and node:test. */
const TEST_FUNCTIONS = new Set(['it', 'test', 'specify', 'xit', 'xtest', 'fit', 'ftest']);
const SUITE_FUNCTIONS = new Set(['describe', 'suite', 'xdescribe', 'fdescribe']);
const SKIPPING_FUNCTIONS = new Set(['xit', 'xtest', 'xdescribe']);
const FOCUSING_FUNCTIONS = new Set(['fit', 'ftest', 'fdescribe']);
/** `it.skip`, `test.skipIf(c)`, `it.runIf(c)`, `test.todo`, `it.fails` (expected to fail, so it passes). */
const SKIP_MODIFIERS = new Set(['skip', 'skipIf', 'runIf', 'todo', 'fails']);
/** Methods on a test's context argument (`t.skip()`, `ctx.skip()`, mocha's `this.skip()`). */
const CONTEXT_SKIPS = new Set(['skip', 'todo']);
const OPTION_MARKERS: Record<string, 'skip' | 'focus'> = {
  skip: 'skip',
  todo: 'skip',
  only: 'focus',
};
const MODULE_MOCKS = new Set([
  'vi.mock',
  'vi.doMock',
  'jest.mock',
  'jest.doMock',
  'jest.unstable_mockModule',
  'jest.setMock',
]);

interface Scope {
  suites: string[];
  /** Qualified name of the test or suite the code belongs to. */
  owner?: string;
  /** The test whose callback is being walked, to count its assertions. */
  test?: TestCase;
  /** Names of the context parameters of the enclosing test callbacks (`t`, `ctx`). */
  contexts: string[];
}

/** Test facts of a JS/TS test file, from the TypeScript parser (which tolerates syntax errors). */
export function extractJsTestFacts(filePath: string, text: string): TestFileFacts {
  const source = ts.createSourceFile(
    filePath,
    text,
    ts.ScriptTarget.Latest,
    true,
    scriptKindOf(filePath),
  );
  const facts: TestFileFacts = {
    tests: [],
    skips: [],
    focuses: [],
    module_stubs: [],
    parser: 'typescript',
  };
  const lineOf = (node: TS.Node) =>
    source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const mark = (kind: 'skip' | 'focus', node: TS.Node, marker: string, scope: Scope) => {
    const occurrence = {
      line: lineOf(node),
      marker,
      ...(scope.owner === undefined ? {} : { test: scope.owner }),
    };
    (kind === 'skip' ? facts.skips : facts.focuses).push(occurrence);
  };

  const walk = (node: TS.Node, scope: Scope): void => {
    if (ts.isCallExpression(node)) {
      const role = testApiRole(node, scope);
      if (role !== undefined) {
        walkTestCall(node, role, scope);
        return;
      }
      if (scope.test !== undefined && isAssertion(node)) scope.test.assertions += 1;
      recordModuleMock(node, scope);
      recordContextSkip(node, scope);
    } else if (ts.isPropertyAccessExpression(node)) {
      recordModifier(node, scope);
      if (scope.test !== undefined && node.name.text === 'should') scope.test.assertions += 1;
    }
    ts.forEachChild(node, (child) => walk(child, scope));
  };

  const walkTestCall = (call: TS.CallExpression, role: 'test' | 'suite', scope: Scope): void => {
    const title = titleOf(call);
    const owner = [...scope.suites, title].join(' > ');
    const callback = call.arguments.find(isFunction);
    const contexts = [...scope.contexts, ...(callback ? contextParameters(callback) : [])];
    let inner: Scope;
    if (role === 'test') {
      const test: TestCase = {
        name: owner,
        line: lineOf(call),
        assertions: 0,
        ...(callback ? { body: bodyFingerprint(callback, source) } : {}),
        ...(calleeChain(call.expression).includes('each') ? { parametrized: true } : {}),
      };
      facts.tests.push(test);
      inner = { suites: scope.suites, owner, test, contexts };
    } else {
      inner = { suites: [...scope.suites, title], owner, contexts };
    }
    const root = calleeChain(call.expression)[0] ?? '';
    if (SKIPPING_FUNCTIONS.has(root)) mark('skip', call.expression, root, inner);
    if (FOCUSING_FUNCTIONS.has(root)) mark('focus', call.expression, root, inner);
    for (const option of call.arguments
      .filter(ts.isObjectLiteralExpression)
      .flatMap((o) => [...o.properties])) {
      const name = option.name && ts.isIdentifier(option.name) ? option.name.text : undefined;
      const kind = name === undefined ? undefined : OPTION_MARKERS[name];
      const disabled =
        ts.isPropertyAssignment(option) && option.initializer.kind === ts.SyntaxKind.FalseKeyword;
      if (kind !== undefined && !disabled) mark(kind, option, `{ ${name} }`, inner);
    }
    ts.forEachChild(call, (child) => walk(child, inner));
  };

  const recordModifier = (access: TS.PropertyAccessExpression, scope: Scope): void => {
    const chain = calleeChain(access);
    const root = chain[0] ?? '';
    if (!TEST_FUNCTIONS.has(root) && !SUITE_FUNCTIONS.has(root)) return;
    const name = access.name.text;
    if (SKIP_MODIFIERS.has(name)) mark('skip', access, chain.join('.'), scope);
    else if (name === 'only') mark('focus', access, chain.join('.'), scope);
  };

  const recordContextSkip = (call: TS.CallExpression, scope: Scope): void => {
    const chain = dottedName(call.expression);
    const [root, method] = chain;
    if (
      chain.length !== 2 ||
      root === undefined ||
      method === undefined ||
      !CONTEXT_SKIPS.has(method)
    )
      return;
    if (scope.contexts.includes(root) || (root === 'this' && scope.test !== undefined))
      mark('skip', call, chain.join('.'), scope);
  };

  const recordModuleMock = (call: TS.CallExpression, scope: Scope): void => {
    const via = dottedName(call.expression).join('.');
    if (!MODULE_MOCKS.has(via) && !via.endsWith('mock.module')) return;
    facts.module_stubs.push({
      line: lineOf(call),
      module: mockedModule(call.arguments[0]),
      via,
      ...(scope.owner === undefined ? {} : { test: scope.owner }),
    });
  };

  walk(source, { suites: [], contexts: [] });
  return facts;
}

export function scriptKindOf(filePath: string): TS.ScriptKind {
  if (/\.[cm]?ts$/.test(filePath)) return ts.ScriptKind.TS;
  if (filePath.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (filePath.endsWith('.jsx')) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

/**
 * Whether this call declares a test or a suite. For `it.each(table)('name', fn)` only the outer call
 * does; a test needs a title or a callback, and `todo` declares no test.
 */
function testApiRole(call: TS.CallExpression, scope: Scope): 'test' | 'suite' | undefined {
  const parent = call.parent;
  if (ts.isCallExpression(parent) && parent.expression === call) return undefined;
  const chain = calleeChain(call.expression);
  const root = chain[0] ?? '';
  if (chain.includes('todo')) return undefined;
  if (SUITE_FUNCTIONS.has(root)) return 'suite';
  const isSubtest = chain.length === 2 && chain[1] === 'test' && scope.contexts.includes(root);
  if (!TEST_FUNCTIONS.has(root) && !isSubtest) return undefined;
  const first = call.arguments[0];
  const titled =
    first !== undefined && (ts.isStringLiteralLike(first) || ts.isTemplateExpression(first));
  return titled || call.arguments.some(isFunction) ? 'test' : undefined;
}

/** `it.skip.each(t)` → ['it', 'skip', 'each']: property names through calls, from the root identifier. */
function calleeChain(node: TS.Expression): string[] {
  if (ts.isIdentifier(node)) return [node.text];
  if (ts.isPropertyAccessExpression(node)) return [...calleeChain(node.expression), node.name.text];
  if (ts.isCallExpression(node)) return calleeChain(node.expression);
  return [];
}

/** `t.assert.equal` → ['t', 'assert', 'equal']; empty when a call sits in between. */
function dottedName(node: TS.Expression): string[] {
  if (ts.isIdentifier(node)) return [node.text];
  if (node.kind === ts.SyntaxKind.ThisKeyword) return ['this'];
  if (ts.isPropertyAccessExpression(node)) {
    const left = dottedName(node.expression);
    return left.length === 0 ? [] : [...left, node.name.text];
  }
  return [];
}

/** `expect(…)`, `expect.soft(…)`, `assert(…)`, `assert.equal(…)`, `t.assert.ok(…)`, `t.assertEqual(…)`. */
function isAssertion(call: TS.CallExpression): boolean {
  const [root, second] = dottedName(call.expression);
  return root === 'expect' || root === 'assert' || (second?.startsWith('assert') ?? false);
}

function titleOf(call: TS.CallExpression): string {
  const first = call.arguments[0];
  if (first === undefined || isFunction(first)) return '(untitled)';
  if (ts.isStringLiteralLike(first)) return first.text;
  if (!ts.isTemplateExpression(first)) return first.getText();
  // Each `${…}` as its expression's own text, spaces collapsed: reformatting a title keeps its name.
  return (
    first.head.text +
    first.templateSpans
      .map((span) => `\${${span.expression.getText().replace(/\s+/g, ' ')}}${span.literal.text}`)
      .join('')
  );
}

function isFunction(node: TS.Node): node is TS.ArrowFunction | TS.FunctionExpression {
  return ts.isArrowFunction(node) || ts.isFunctionExpression(node);
}

/** The callback's body without whitespace: a renamed or re-indented (wrapped) test keeps it. */
function bodyFingerprint(
  callback: TS.ArrowFunction | TS.FunctionExpression,
  source: TS.SourceFile,
): string {
  const text = callback.body.getText(source).replace(/\s+/g, '');
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function contextParameters(callback: TS.ArrowFunction | TS.FunctionExpression): string[] {
  const first = callback.parameters[0]?.name;
  return first !== undefined && ts.isIdentifier(first) ? [first.text] : [];
}

/** The module path of `vi.mock('./db')` or `vi.mock(import('./db'))`; `<dynamic>` when computed. */
function mockedModule(argument: TS.Expression | undefined): string {
  if (argument === undefined) return '<dynamic>';
  if (ts.isStringLiteralLike(argument)) return argument.text;
  if (ts.isCallExpression(argument) && argument.expression.kind === ts.SyntaxKind.ImportKeyword) {
    return mockedModule(argument.arguments[0]);
  }
  return '<dynamic>';
}
