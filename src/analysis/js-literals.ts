import type TS from 'typescript';
import type { LiteralUse, ProductLiterals } from '../integrity/special-cased-inputs.js';
import { scriptKindOf } from './js-test-facts.js';
import { typescript } from './typescript-parser.js';

/**
 * The literals of JS/TS files for `special_cases_test_input`, written as the Python reader writes
 * them (a string as JSON, a number in its shortest form, a tuple of literals as `(a, b)`), so tests
 * and product code compare by value. Callers await loadTypeScript() first.
 */

/**
 * The literals a test file hands to calls: one by one, together, inside arrays and objects, and the
 * operands of a comparison handed to one (`assert(f(3) === 7)`); and the truth a call expects of its
 * argument (`toBe(false)`, `assert.ok(!f(x))`, `toBeFalsy()`), an answer to pair inputs with.
 */
export function jsTestInputs(file: string, text: string): { value: string; line: number }[] {
  const ts = typescript();
  const source = parse(file, text);
  const found: { value: string; line: number }[] = [];
  const visit = (node: TS.Node): void => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const args = [...(node.arguments ?? [])];
      for (const argument of args) leaves(argument, source, found);
      const expected = expectedTruth(node, args);
      if (expected !== undefined) found.push({ value: expected, line: lineOf(node, source) });
      const together = args.length > 1 ? tuple(args) : undefined;
      if (together !== undefined) found.push({ value: together, line: lineOf(node, source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The truth a call asks of its argument: a boolean literal, a negated one, or a truthy matcher. */
function expectedTruth(
  node: TS.CallExpression | TS.NewExpression,
  args: TS.Node[],
): string | undefined {
  const ts = typescript();
  const [first] = args;
  if (first !== undefined && args.length === 1) {
    const value = truth(first);
    if (value !== undefined) return value;
    if (ts.isPrefixUnaryExpression(first) && first.operator === ts.SyntaxKind.ExclamationToken)
      return 'False';
  }
  const name = ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : '';
  return name === 'toBeTruthy' ? 'True' : name === 'toBeFalsy' ? 'False' : undefined;
}

function truth(node: TS.Node): string | undefined {
  const kind = node.kind;
  const syntax = typescript().SyntaxKind;
  return kind === syntax.TrueKeyword ? 'True' : kind === syntax.FalseKeyword ? 'False' : undefined;
}

/** How a product file uses literals (compared, a `case`, a key, held in a table), and all it holds. */
export function jsProductLiterals(file: string, now: string, base?: string): ProductLiterals {
  const source = parse(file, now);
  return {
    path: file,
    uses: uses(source),
    literals: literals(source),
    held: base ? held(parse(file, base)) : [],
  };
}

let comparisons: Set<TS.SyntaxKind> | undefined;

/** Built on first use: the compiler is loaded lazily. */
function isComparison(kind: TS.SyntaxKind): boolean {
  const syntax = typescript().SyntaxKind;
  comparisons ??= new Set([
    syntax.EqualsEqualsEqualsToken,
    syntax.EqualsEqualsToken,
    syntax.ExclamationEqualsEqualsToken,
    syntax.ExclamationEqualsToken,
    syntax.LessThanToken,
    syntax.LessThanEqualsToken,
    syntax.GreaterThanToken,
    syntax.GreaterThanEqualsToken,
  ]);
  return comparisons.has(kind);
}

function uses(source: TS.SourceFile): LiteralUse[] {
  const ts = typescript();
  const found: LiteralUse[] = [];
  const table = (node: TS.Node, role: LiteralUse['role']) => {
    const members: { value: string; line: number }[] = [];
    leaves(node, source, members);
    const line = lineOf(node, source);
    found.push(...members.map((member) => ({ ...member, role, table: line })));
    if (ts.isObjectLiteralExpression(node))
      for (const property of node.properties) {
        const key = property.name && keyOf(property.name);
        const scope = endLineOf(property, source);
        if (key !== undefined)
          found.push({
            value: key,
            line: lineOf(property, source),
            role: 'key',
            table: line,
            scope,
          });
      }
  };
  const visit = (node: TS.Node): void => {
    if (ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node))
      return table(node, 'element');
    if (ts.isBinaryExpression(node) && isComparison(node.operatorToken.kind)) {
      // `typeof x === "string"` asks for a type, not a value.
      const typeTest = [node.left, node.right].some((side) => ts.isTypeOfExpression(side));
      for (const operand of typeTest ? [] : [node.left, node.right]) {
        const value = literal(operand);
        const scope = endLineOf(decided(node), source);
        if (value !== undefined)
          found.push({ value, line: lineOf(operand, source), role: 'comparison', scope });
      }
    } else if (ts.isCaseClause(node)) {
      const value = literal(node.expression);
      const scope = endLineOf(node, source);
      if (value !== undefined)
        found.push({ value, line: lineOf(node, source), role: 'branch', scope });
    } else if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'includes' &&
      ts.isArrayLiteralExpression(node.expression.expression)
    ) {
      // `[a, b, c].includes(x)` is Python's `x in (a, b, c)`: each member is compared with x.
      table(node.expression.expression, 'comparison');
      node.arguments.forEach(visit);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** What a comparison decides: the nearest statement or conditional expression holding it. */
function decided(node: TS.Node): TS.Node {
  const ts = typescript();
  let at = node;
  while (at.parent !== undefined && !ts.isBlock(at.parent) && !ts.isSourceFile(at.parent)) {
    at = at.parent;
    if (ts.isConditionalExpression(at) || ts.isIfStatement(at)) return at;
  }
  return at;
}

/** Every literal with its line, booleans included: the answers a comparison can give. */
function literals(source: TS.SourceFile): { value: string; line: number }[] {
  const found: { value: string; line: number }[] = [];
  const visit = (node: TS.Node): void => {
    const value = literal(node) ?? truth(node);
    if (value !== undefined) found.push({ value, line: lineOf(node, source) });
    typescript().forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function held(source: TS.SourceFile): string[] {
  const values = new Set<string>();
  const visit = (node: TS.Node): void => {
    const value = literal(node);
    if (value !== undefined) values.add(value);
    typescript().forEachChild(node, visit);
  };
  visit(source);
  return [...values].sort();
}

/** A string or numeric key, quoted or computed; an identifier key is a field name, not a value. */
function keyOf(name: TS.PropertyName): string | undefined {
  const ts = typescript();
  if (ts.isComputedPropertyName(name)) return literal(name.expression);
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return literal(name);
  return undefined;
}

function leaves(
  node: TS.Node,
  source: TS.SourceFile,
  found: { value: string; line: number }[],
): void {
  const ts = typescript();
  const value = literal(node);
  if (value !== undefined) found.push({ value, line: lineOf(node, source) });
  if (ts.isBinaryExpression(node) && isComparison(node.operatorToken.kind)) {
    leaves(node.left, source, found);
    leaves(node.right, source, found);
  } else if (ts.isArrayLiteralExpression(node))
    for (const element of node.elements) leaves(element, source, found);
  else if (ts.isObjectLiteralExpression(node))
    for (const property of node.properties)
      if (ts.isPropertyAssignment(property)) leaves(property.initializer, source, found);
}

function literal(node: TS.Node): string | undefined {
  const ts = typescript();
  if (ts.isParenthesizedExpression(node)) return literal(node.expression);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    return JSON.stringify(node.text);
  if (ts.isNumericLiteral(node)) return String(Number(node.text));
  if (
    ts.isPrefixUnaryExpression(node) &&
    node.operator === ts.SyntaxKind.MinusToken &&
    ts.isNumericLiteral(node.operand)
  )
    return String(-Number(node.operand.text));
  if (ts.isArrayLiteralExpression(node) && node.elements.length > 0) return tuple(node.elements);
  return undefined;
}

function tuple(nodes: readonly TS.Node[]): string | undefined {
  const parts = nodes.map(literal);
  return parts.includes(undefined) ? undefined : `(${parts.join(', ')})`;
}

function parse(file: string, text: string): TS.SourceFile {
  const ts = typescript();
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKindOf(file));
}

function lineOf(node: TS.Node, source: TS.SourceFile): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
}

function endLineOf(node: TS.Node, source: TS.SourceFile): number {
  return source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
}
