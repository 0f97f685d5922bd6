import path from 'node:path';
import type TS from 'typescript';
import type { ImportAlias } from '../scope/import-reach.js';
import { record, safeJson } from '../scope/product-code-rules.js';
import { typescript } from './typescript-parser.js';

/** Configs that may declare module aliases (tsconfig.*.json too: `extends` reaches them). */
export const ALIAS_CONFIG = new RegExp(
  String.raw`(?:^|/)(?:[jt]sconfig(?:\.[\w.-]+)?\.json|(?:vitest|vite|jest)\.config\.[cm]?[jt]s` +
    String.raw`|jest\.config\.json|package\.json)$`,
);

/**
 * The module aliases a repository's configs declare, so that a test importing `@/lib/price` reaches
 * the file it names: tsconfig/jsconfig `compilerOptions.paths` and `baseUrl` (through `extends`),
 * vite/vitest `resolve.alias`, jest `moduleNameMapper` (jest config or package.json `jest`). Read
 * from the config texts (repository-relative path → text); call after `loadTypeScript()`. The
 * most specific scope comes first (a package's own config before the root's).
 */
export function importAliases(configs: ReadonlyMap<string, string>): ImportAlias[] {
  const aliases: ImportAlias[] = [];
  for (const [file, text] of configs) {
    const name = path.posix.basename(file);
    if (/^[jt]sconfig\.json$/.test(name)) aliases.push(...compilerPaths(file, configs));
    else if (/^(?:vitest|vite)\.config\./.test(name)) aliases.push(...viteAliases(file, text));
    else if (/^jest\.config\./.test(name)) aliases.push(...jestAliases(file, text));
    else if (name === 'package.json') aliases.push(...jestAliases(file, text, 'jest'));
  }
  // A deeper scope first; in one scope, a bare baseUrl only after every explicit alias.
  const rank = (alias: ImportAlias) =>
    (alias.scope === '' ? 0 : alias.scope.split('/').length) * 2 + (alias.find === ANY ? 0 : 1);
  return aliases.sort((a, b) => rank(b) - rank(a));
}

function directoryOf(file: string): string {
  const directory = path.posix.dirname(file);
  return directory === '.' ? '' : directory;
}

/** A path relative to `directory`, repository-relative ('' for the root). */
function under(directory: string, relative: string): string {
  const joined = path.posix.normalize(path.posix.join(directory, relative.replace(/^\/+/, '')));
  return joined === '.' ? '' : joined.replace(/\/$/, '');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const escapeReplacement = (text: string) => text.replace(/\$/g, '$$$$');

// -------------------------------------------------------------------------------------------------
// tsconfig.json: `paths` are relative to `baseUrl`, else to the config that declares them.

/** Any specifier: what a bare `baseUrl` resolves. */
const ANY = /^(.+)$/;

interface CompilerSettings {
  paths?: { value: Record<string, unknown>; directory: string };
  baseUrl?: { value: string; directory: string };
}

function compilerPaths(file: string, configs: ReadonlyMap<string, string>): ImportAlias[] {
  const settings = compilerSettings(file, configs, new Set());
  const base = settings.baseUrl && under(settings.baseUrl.directory, settings.baseUrl.value);
  const aliases: ImportAlias[] = [];
  const scope = directoryOf(file);
  if (settings.paths) {
    const from = base ?? settings.paths.directory;
    for (const [pattern, targets] of Object.entries(settings.paths.value)) {
      if (!Array.isArray(targets)) continue;
      const [prefix, suffix = ''] = pattern.split('*');
      const wildcard = pattern.includes('*');
      const find = new RegExp(
        `^${escapeRegExp(prefix!)}${wildcard ? '(.*)' : ''}${escapeRegExp(suffix)}$`,
      );
      for (const target of targets.filter((item): item is string => typeof item === 'string'))
        aliases.push({
          scope,
          find,
          replacement: escapeReplacement(under(from, target)).replace('*', '$1'),
        });
    }
  }
  // A bare `baseUrl` resolves every non-relative specifier against it, after `paths`.
  if (base !== undefined)
    aliases.push({ scope, find: ANY, replacement: base ? `${escapeReplacement(base)}/$1` : '$1' });
  return aliases;
}

/** `paths` and `baseUrl` of a tsconfig, its own or inherited by `extends` (a repository file). */
function compilerSettings(
  file: string,
  configs: ReadonlyMap<string, string>,
  visited: Set<string>,
): CompilerSettings {
  const text = configs.get(file);
  if (text === undefined || visited.has(file)) return {};
  visited.add(file);
  const config = record(typescript().parseConfigFileTextToJson(file, text).config);
  const options = record(config.compilerOptions);
  const directory = directoryOf(file);
  const extended = [config.extends]
    .flat()
    .filter((entry): entry is string => typeof entry === 'string' && entry.startsWith('.'))
    .map((entry) => under(directory, entry.endsWith('.json') ? entry : `${entry}.json`));
  // Later bases override earlier ones, and the config itself overrides them all.
  const settings: CompilerSettings = {};
  for (const parent of extended)
    Object.assign(settings, compilerSettings(parent, configs, visited));
  if (options.paths && typeof options.paths === 'object')
    settings.paths = { value: record(options.paths), directory };
  if (typeof options.baseUrl === 'string') settings.baseUrl = { value: options.baseUrl, directory };
  return settings;
}

// -------------------------------------------------------------------------------------------------
// vite/vitest `alias`: `{ '@': path.resolve(__dirname, 'src') }` or `[{ find, replacement }]`.

function viteAliases(file: string, text: string): ImportAlias[] {
  const ts = typescript();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const constants = constantsOf(source);
  const scope = directoryOf(file);
  const aliases: ImportAlias[] = [];
  const add = (find: RegExp | string, target: TS.Expression) => {
    const relative = pathIn(target, constants);
    if (relative === undefined) return;
    // A regex alias is a plain text replacement: its target's trailing slash is kept.
    const trailing = relative.endsWith('/') ? '/' : '';
    const replacement = escapeReplacement(under(scope, relative)) + trailing;
    // A string alias matches the specifier itself or its subpaths (`@` and `@/lib/price`).
    const pattern = typeof find === 'string' ? new RegExp(`^${escapeRegExp(find)}(?=/|$)`) : find;
    aliases.push({ scope, find: pattern, replacement });
  };
  const visit = (node: TS.Node): void => {
    if (ts.isPropertyAssignment(node) && propertyName(node.name) === 'alias') {
      const value = node.initializer;
      if (ts.isObjectLiteralExpression(value))
        for (const entry of value.properties)
          if (ts.isPropertyAssignment(entry) && propertyName(entry.name) !== undefined)
            add(propertyName(entry.name)!, entry.initializer);
      if (ts.isArrayLiteralExpression(value))
        for (const entry of value.elements) {
          if (!ts.isObjectLiteralExpression(entry)) continue;
          const find = property(entry, 'find');
          const replacement = property(entry, 'replacement');
          const pattern = find && findPattern(find);
          if (pattern !== undefined && replacement) add(pattern, replacement);
        }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return aliases;
}

/**
 * The directory an alias target names, relative to the config: the string literals of the
 * expression joined (`path.resolve(__dirname, 'src')`, `new URL('./src', import.meta.url)`,
 * `'/src'`), through the file's `const` names (`const app = …; alias: { '~': app }`); undefined
 * when it holds none.
 */
function pathIn(
  expression: TS.Expression,
  constants: ReadonlyMap<string, TS.Node>,
): string | undefined {
  const ts = typescript();
  const parts: string[] = [];
  const followed = new Set<string>();
  const visit = (node: TS.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) parts.push(node.text);
    const constant = ts.isIdentifier(node) ? constants.get(node.text) : undefined;
    if (constant && ts.isIdentifier(node) && !followed.has(node.text)) {
      followed.add(node.text);
      visit(constant);
    }
    ts.forEachChild(node, visit);
  };
  visit(expression);
  if (parts.length === 0) return undefined;
  return path.posix.join(...parts.map((part) => part.replace(/^\/+/, '')));
}

/** The top-level `const name = …` initializers of a config file, by name. */
function constantsOf(source: TS.SourceFile): Map<string, TS.Node> {
  const ts = typescript();
  const constants = new Map<string, TS.Node>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations)
      if (ts.isIdentifier(declaration.name) && declaration.initializer)
        constants.set(declaration.name.text, declaration.initializer);
  }
  return constants;
}

function findPattern(expression: TS.Expression): RegExp | string | undefined {
  const ts = typescript();
  if (ts.isStringLiteral(expression)) return expression.text;
  if (!ts.isRegularExpressionLiteral(expression)) return undefined;
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(expression.text);
  try {
    return literal ? new RegExp(literal[1]!, literal[2]!.replace('g', '')) : undefined;
  } catch {
    return undefined;
  }
}

// -------------------------------------------------------------------------------------------------
// jest `moduleNameMapper`: `{ '^@/(.*)$': '<rootDir>/src/$1' }` (a value may be a list).

function jestAliases(file: string, text: string, key?: string): ImportAlias[] {
  const config = key ? record(record(safeJson(text))[key]) : jestConfigObject(file, text);
  const rootDir = typeof config.rootDir === 'string' ? config.rootDir : '.';
  const root = under(directoryOf(file), rootDir);
  const aliases: ImportAlias[] = [];
  for (const [pattern, value] of Object.entries(record(config.moduleNameMapper))) {
    let find: RegExp;
    try {
      find = new RegExp(pattern);
    } catch {
      continue;
    }
    // A target outside <rootDir> names an installed module (`identity-obj-proxy`), not a file.
    for (const target of [value].flat())
      if (typeof target === 'string' && target.startsWith('<rootDir>'))
        aliases.push({
          scope: root,
          find,
          replacement: under(root, target.slice('<rootDir>'.length)),
        });
  }
  return aliases;
}

/** A jest config file's object: JSON, or the literal its JS/TS module exports. */
function jestConfigObject(file: string, text: string): Record<string, unknown> {
  if (file.endsWith('.json')) return record(safeJson(text));
  const ts = typescript();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Record<string, unknown> = {};
  const visit = (node: TS.Node): void => {
    if (ts.isPropertyAssignment(node) && ts.isObjectLiteralExpression(node.initializer)) {
      const name = propertyName(node.name);
      if (name === 'moduleNameMapper') found.moduleNameMapper = literalStrings(node.initializer);
    }
    if (ts.isPropertyAssignment(node) && propertyName(node.name) === 'rootDir') {
      if (ts.isStringLiteral(node.initializer)) found.rootDir = node.initializer.text;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** An object literal's string (or string-list) values by key. */
function literalStrings(object: TS.ObjectLiteralExpression): Record<string, string[]> {
  const ts = typescript();
  const values: Record<string, string[]> = {};
  for (const entry of object.properties) {
    if (!ts.isPropertyAssignment(entry)) continue;
    const name = propertyName(entry.name);
    const value = entry.initializer;
    const items = ts.isArrayLiteralExpression(value) ? [...value.elements] : [value];
    const texts = items.filter(ts.isStringLiteralLike).map((item) => item.text);
    if (name !== undefined && texts.length > 0) values[name] = texts;
  }
  return values;
}

function propertyName(name: TS.PropertyName): string | undefined {
  const ts = typescript();
  return ts.isIdentifier(name) || ts.isStringLiteralLike(name) ? name.text : undefined;
}

function property(object: TS.ObjectLiteralExpression, name: string): TS.Expression | undefined {
  const ts = typescript();
  const found = object.properties.find(
    (entry) => ts.isPropertyAssignment(entry) && propertyName(entry.name) === name,
  );
  return found && ts.isPropertyAssignment(found) ? found.initializer : undefined;
}
