import { JEST_EQUALITY_SOURCE } from './jest-equality.js';

/**
 * The part of the node call recorder (src/runner/node-call-recorder.ts) that runs in jest's
 * processes (its command line when it runs in band, its workers). jest loads no module through
 * node's loader: its runtime compiles each module of a test file itself with `vm.compileFunction`
 * (the module's name as `filename`, the test file's context as `parsingContext`) and calls the
 * function it gets with the module object first. A compiled module of a changed product file is
 * handed back wrapped: once its body ran, its exported functions are wrapped as node's CommonJS
 * ones are. Each test file's context is a scope of its own: a fresh module registry, so its calls
 * are replayed in order apart from the other files' (`session`), with the environment its tests see
 * (jest gives each context a copy of `process.env`). A module loaded twice in one context
 * (`jest.resetModules`, `jest.isolateModules`) is a `state` line: its later calls are not compared
 * in order. The test's name comes from jest's `expect` (loaded by jest into the test file's
 * context), which keeps the running test's name in the state it holds on that context's global
 * (`Symbol.for('$$jest-matchers-object')`). It reads
 * the enclosing recorder's `files`, `callers`, `config`, `write`, `wrapExports`,
 * `projectModule`, `domLike`, `path` and `startCwd`. Each context's passing equalities are judged again (src/runner/jest-equality.ts),
 * with the code jest compiled from the base's test files as what the tests bring.
 */
export const JEST_CALLS_SOURCE = String.raw`const vm = require('node:vm');
const compile = vm.compileFunction;
const EXPECT_STATE = Symbol.for('$$jest-matchers-object');
${JEST_EQUALITY_SOURCE}
const scopes = new WeakMap();
let contexts = 0;
const testName = (context, led) => {
  const state = (context[EXPECT_STATE] || {}).state || {};
  const file = path.relative(startCwd, led);
  return typeof state.currentTestName === 'string' ? file + ' > ' + state.currentTestName : file;
};
const scopeOf = (context) => {
  let scope = scopes.get(context);
  if (scope) return scope;
  const env = () => (context.process && context.process.env) || process.env;
  const startEnv = { ...env() };
  contexts += 1;
  scope = { session: process.pid + '-' + contexts, env, startEnv, loaded: new Set(),
    startNames: Object.keys(startEnv), test: (led) => testName(context, led), testCode: [],
    prepared: domLike(context) };
  scopes.set(context, scope);
  return scope;
};
vm.compileFunction = function (code, params, options) {
  const compiled = compile.apply(this, arguments);
  const file = options && options.filename;
  const context = options && options.parsingContext;
  const product = files.has(file);
  // A module of the project run before the test framework is installed: a setup file.
  if (context && !context[EXPECT_STATE] && projectModule(file)) scopeOf(context).prepared = true;
  if (!(product || callers.has(file)) || !context || !Array.isArray(params) ||
    params[0] !== 'module')
    return compiled;
  const scope = scopeOf(context);
  watchEquality(context, scope);
  // What the tests' code is, as jest compiled it: the equality watch keeps what it decides.
  if (!product) {
    scope.testCode.push(String(code));
    return compiled;
  }
  const kind = config.esm[require('node:url').pathToFileURL(file).href] ? 'esm' : 'cjs';
  if (scope.loaded.has(file)) write({ event: 'state', test: '(reloaded)', module: scope.session +
    ':' + file });
  scope.loaded.add(file);
  const loaded = function (module) {
    const result = compiled.apply(this, arguments);
    watchEquality(context, scope);
    wrapExports(module, file, kind, scope);
    return result;
  };
  return Object.defineProperty(loaded, 'length', { value: compiled.length });
};`;
