import { stripComment } from './source-text.js';

/**
 * Whether a Python module defines an assertion helper as tests write them: a function whose name
 * starts with `assert` (`assert_valid`, `assertShouted`) and whose body asserts (`assert …`,
 * `raise AssertionError`). Such a module needs no test framework to decide a test's outcome, so
 * where only tests import it, it is test support (src/scope/product-code.ts). Read from the
 * text, as the imports are; a docstring example may count too, which only makes it a candidate.
 */
export function definesPythonAssertion(text: string): boolean {
  const lines = text.split(/\r?\n/).map((line) => stripComment(line, '#'));
  for (let index = 0; index < lines.length; index += 1) {
    const header = /^(\s*)(?:async\s+)?def\s+assert\w*\s*\(/.exec(lines[index]!);
    if (!header) continue;
    const indent = header[1]!.length;
    for (let body = index + 1; body < lines.length; body += 1) {
      const line = lines[body]!;
      if (line.trim() === '') continue;
      if (line.length - line.trimStart().length <= indent) break;
      if (/^\s*assert\b|\braise\s+AssertionError\b/.test(line)) return true;
    }
  }
  return false;
}

/** Assertion libraries that are no test framework: product code may use them for invariants. */
const JS_ASSERTION_MODULES = /^(?:node:)?assert(?:\/strict)?$|^uvu\/assert$|^power-assert$/;
/** A function whose name starts with `assert` or `expect`: declared, or a function value bound. */
const NAME = String.raw`(?:assert|expect)\w*`;
const FUNCTION_VALUE = String.raw`(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|\w+\s*=>)`;
const JS_ASSERTION_NAME = new RegExp(
  [
    String.raw`\bfunction\s*\*?\s*${NAME}\s*\(`,
    String.raw`\b(?:const|let|var)\s+${NAME}\s*=\s*${FUNCTION_VALUE}`,
    String.raw`\bexports\.${NAME}\s*=\s*${FUNCTION_VALUE}`,
  ].join('|'),
);

/**
 * Whether a JS/TS module defines an assertion helper: it loads an assertion library and defines a
 * function named `assert…` or `expect…` (`export const expectGreeting = (text) => assert.equal(…)`).
 */
export function definesJavascriptAssertion(text: string, specifiers: readonly string[]): boolean {
  return (
    specifiers.some((specifier) => JS_ASSERTION_MODULES.test(specifier)) &&
    JS_ASSERTION_NAME.test(text)
  );
}
