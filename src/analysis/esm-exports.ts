import type TS from 'typescript';
import { typescript } from './typescript-parser.js';

/** What an ES module exports, as its own text declares it. */
export interface EsmExports {
  /** Names bound to a function the module declares (`default` included). */
  functions: string[];
  /** Every other name it exports itself (values, classes, re-exports of other modules). */
  others: string[];
}

/**
 * The export names of a JavaScript ES module, for the call recorder's wrapper module
 * (src/runner/node-call-recorder.ts), which must list them statically: its functions are wrapped,
 * its other names re-exported as live bindings. Callers await loadTypeScript() first.
 */
export function esmExports(file: string, text: string): EsmExports {
  const ts = typescript();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const local = localFunctions(ts, source);
  const functions = new Set<string>();
  const others = new Set<string>();
  const add = (name: string, isFunction: boolean) => (isFunction ? functions : others).add(name);
  for (const statement of source.statements) {
    if (ts.isExportAssignment(statement)) {
      const value = unparenthesized(ts, statement.expression);
      add(
        'default',
        isFunctionValue(ts, value) || (ts.isIdentifier(value) && local.has(value.text)),
      );
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      const elsewhere = statement.moduleSpecifier !== undefined;
      if (!clause) continue; // `export * from`: the wrapper re-exports the original's names wholesale
      if (ts.isNamespaceExport(clause)) add(clause.name.text, false);
      else
        for (const element of clause.elements) {
          const name = (element.propertyName ?? element.name).text;
          add(element.name.text, !elsewhere && !element.isTypeOnly && local.has(name));
        }
    } else if (hasModifier(ts, statement, ts.SyntaxKind.ExportKeyword)) {
      const isDefault = hasModifier(ts, statement, ts.SyntaxKind.DefaultKeyword);
      for (const name of declaredNames(ts, statement))
        add(isDefault ? 'default' : name, local.has(name));
      if (isDefault && ts.isFunctionDeclaration(statement) && !statement.name) add('default', true);
      if (isDefault && ts.isClassDeclaration(statement) && !statement.name) add('default', false);
    }
  }
  return {
    functions: [...functions],
    others: [...others].filter((name) => !functions.has(name)),
  };
}

/** The module's own top-level functions: declarations, and constants holding a function. */
function localFunctions(ts: typeof TS, source: TS.SourceFile): Set<string> {
  const found = new Set<string>();
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) found.add(statement.name.text);
    if (ts.isVariableStatement(statement) && statement.declarationList.flags & ts.NodeFlags.Const)
      for (const item of statement.declarationList.declarations)
        if (ts.isIdentifier(item.name) && item.initializer)
          if (isFunctionValue(ts, unparenthesized(ts, item.initializer))) found.add(item.name.text);
  }
  return found;
}

function isFunctionValue(ts: typeof TS, node: TS.Expression): boolean {
  return ts.isArrowFunction(node) || ts.isFunctionExpression(node);
}

function unparenthesized(ts: typeof TS, node: TS.Expression): TS.Expression {
  return ts.isParenthesizedExpression(node) ? unparenthesized(ts, node.expression) : node;
}

function hasModifier(ts: typeof TS, statement: TS.Statement, kind: TS.SyntaxKind): boolean {
  const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
  return modifiers?.some((item) => item.kind === kind) ?? false;
}

/** `function f`, `class C`, `const a = …, b = …`: the names a declaration binds. */
function declaredNames(ts: typeof TS, statement: TS.Statement): string[] {
  if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement))
    return statement.name ? [statement.name.text] : [];
  if (ts.isVariableStatement(statement))
    return statement.declarationList.declarations.flatMap((item) => boundNames(ts, item.name));
  return [];
}

function boundNames(ts: typeof TS, name: TS.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) =>
    ts.isOmittedExpression(element) ? [] : boundNames(ts, element.name),
  );
}
