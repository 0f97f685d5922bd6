import type TS from 'typescript';
import { typescript } from './typescript-parser.js';

/** What an ES module exports, as its own text declares it. */
export interface EsmExports {
  /** The names it exports itself (`default` included), in order. */
  names: string[];
  /** Whether it re-exports another module's names wholesale (`export * from`). */
  star: boolean;
}

/**
 * The export names of a JavaScript ES module, for the call recorder's wrapper module
 * (src/runner/node-call-recorder.ts), which must list them statically. Callers await
 * loadTypeScript() first.
 */
export function esmExports(file: string, text: string): EsmExports {
  const ts = typescript();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const names = new Set<string>();
  let star = false;
  for (const statement of source.statements) {
    if (ts.isExportAssignment(statement)) names.add('default');
    else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (!clause) star = true;
      else if (ts.isNamespaceExport(clause)) names.add(clause.name.text);
      else for (const element of clause.elements) names.add(element.name.text);
    } else if (exported(ts, statement)) {
      for (const name of declaredNames(ts, statement)) names.add(name);
    }
  }
  return { names: [...names], star };
}

function exported(ts: typeof TS, statement: TS.Statement): boolean {
  const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
  return modifiers?.some((item) => item.kind === ts.SyntaxKind.ExportKeyword) ?? false;
}

/** `export function f`, `export class C`, `export const a = …, b = …`, `export default function`. */
function declaredNames(ts: typeof TS, statement: TS.Statement): string[] {
  const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
  if (modifiers?.some((item) => item.kind === ts.SyntaxKind.DefaultKeyword)) return ['default'];
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
