/**
 * The test a line of a Java, Kotlin or C# test file belongs to: the method marked as a test
 * (`@Test`, `@ParameterizedTest`… in JUnit and TestNG; `[Fact]`, `[Theory]`, `[Test]`,
 * `[TestCase(…)]`, `[TestMethod]` in xUnit, NUnit and MSTest) whose body holds it, with the class
 * around it, named as the runner's report names it: `Class#method` for Maven's surefire
 * (`com.acme.ClampTest#clampsNegatives`), `Class.Method` for `dotnet test`'s trx
 * (`Acme.Tests.ClampTests.ClampsNegatives`). A citation found so verifies through that test. Blocks
 * are told by their braces (string literals and `//` comments left out); a lambda's block inside a
 * test belongs to the test. Undefined for a helper method, a field or a line outside every method.
 */
export function enclosingAnnotatedTest(
  lines: readonly string[],
  language: 'jvm' | 'dotnet',
): string | undefined {
  let method: string | undefined;
  for (const header of enclosingHeaders(lines)) {
    if (method === undefined) {
      const name = methodName(lines, header);
      if (name === undefined) continue; // a lambda's or an initializer's block
      if (!isMarkedTest(lines, header)) return undefined;
      method = name;
      continue;
    }
    const owner = /\b(?:class|object)\s+(\w+)/.exec(lines[header]!)?.[1];
    if (owner !== undefined) return `${owner}${language === 'jvm' ? '#' : '.'}${method}`;
  }
  return undefined;
}

/**
 * The lines that open the blocks around the last line, innermost first: a line's own `{`, or for a
 * `{` alone on its line (C#'s layout) the line before it. The last line itself opens one when it
 * is a method's first line.
 */
function* enclosingHeaders(lines: readonly string[]): Generator<number> {
  const cited = lines.length - 1;
  if (/\{\s*$/.test(code(lines[cited]!))) yield cited;
  let depth = 0;
  for (let index = cited - 1; index >= 0; index -= 1) {
    const text = code(lines[index]!);
    for (let at = text.length - 1; at >= 0; at -= 1) {
      if (text[at] === '}') depth += 1;
      else if (text[at] === '{' && depth > 0) depth -= 1;
      else if (text[at] === '{')
        yield text.slice(0, at).trim() === '' ? previous(lines, index) : index;
    }
  }
}

/** The line's code: string and character literals emptied, a `//` comment cut. */
function code(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""').replace(/\/\/.*$/, '');
}

function previous(lines: readonly string[], index: number): number {
  let at = index - 1;
  while (at > 0 && lines[at]!.trim() === '') at -= 1;
  return Math.max(at, 0);
}

/** The name the method declaration at `header` declares (Kotlin's `fun name(`, `type name(…)`). */
function methodName(lines: readonly string[], header: number): string | undefined {
  const text = code(lines[header]!);
  const kotlin = /\bfun\s+(?:`([^`]+)`|(\w+))\s*\(/.exec(text);
  if (kotlin) return kotlin[1] ?? kotlin[2];
  if (/\bnew\s+[\w.<>]+\s*\(/.test(text)) return undefined; // an anonymous class's body
  const name = DECLARED.exec(text)?.[1];
  return name !== undefined && !CONTROL_WORDS.has(name) ? name : undefined;
}

/** `modifiers type name(parameters) throws X {`: one line, parameters with at most one nesting. */
const DECLARED =
  /^\s*(?:[\w@<>[\],.?]+\s+)+(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:throws\s+[\w.,\s]+)?\{?\s*$/;

const CONTROL_WORDS = new Set([
  'if',
  'for',
  'foreach',
  'while',
  'switch',
  'catch',
  'using',
  'lock',
]);

/** Whether the annotations or attributes just above the method (or on its line) mark a test. */
function isMarkedTest(lines: readonly string[], header: number): boolean {
  for (let index = header; index >= 0; index -= 1) {
    const text = lines[index]!.trim();
    if (JVM_MARK.test(text) || DOTNET_MARK.test(text)) return true;
    if (index < header && !/^(?:@|\[)/.test(text) && text !== '') return false;
  }
  return false;
}

/** JUnit 4/5 and TestNG annotations; xUnit, NUnit and MSTest attributes (one among several too). */
const JVM_MARK =
  /(?:^|\s)@(?:[\w.]*\.)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b/;
const DOTNET_MARK =
  /\[(?:[^\]]*[\s,(])?(?:Fact|Theory|Test|TestCase|TestCaseSource|TestMethod|DataTestMethod)(?:Attribute)?\b/;
