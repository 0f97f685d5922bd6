import type TS from 'typescript';
import { parse as parseYaml } from 'yaml';
import type { ConfigSettings } from '../integrity/integrity.js';
import { testConfigKind } from '../scope/test-paths.js';
import { bracketDepth, stripComment } from './source-text.js';
import { typescript } from './typescript-parser.js';

/** The compiler, loaded on first use (see typescript-parser.ts); callers await loadTypeScript() first. */
const ts = new Proxy({} as typeof TS, {
  get: (_target, key) => typescript()[key as keyof typeof TS],
});

/** pytest settings that decide which tests are collected and how they run. */
const PYTEST_KEYS = new Set([
  'addopts',
  'testpaths',
  'python_files',
  'python_classes',
  'python_functions',
  'norecursedirs',
]);
/** vitest/jest settings that decide which tests are collected. */
const JS_RUNNER_KEYS = new Set([
  'include',
  'exclude',
  'testMatch',
  'testRegex',
  'testPathIgnorePatterns',
  'testNamePattern',
  'roots',
  'passWithNoTests',
]);
const UNPARSEABLE = '(whole file)';

/**
 * The test-selection settings of a config file, by dotted key, each value as comparable text. Only what
 * decides which tests run is kept, so unrelated edits to the same file report nothing.
 */
export function extractConfigSettings(filePath: string, text: string): ConfigSettings {
  switch (testConfigKind(filePath)) {
    case 'package_json':
      return packageJsonSettings(text);
    case 'pyproject':
      return tomlSectionSettings(text, ['tool.pytest.ini_options', 'tool.pytest']);
    case 'pytest_ini':
    case 'tox_ini':
      return iniSectionSettings(text, 'pytest');
    case 'setup_cfg':
      return iniSectionSettings(text, 'tool:pytest');
    case 'conftest':
      return conftestSettings(text);
    case 'js_runner_config':
      return jsRunnerConfigSettings(filePath, text);
    case 'guardkit_config':
      return guardkitSettings(text);
    case undefined:
      return {};
  }
}

function packageJsonSettings(text: string): ConfigSettings {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return { [UNPARSEABLE]: 'does not parse as JSON' };
  }
  const settings: ConfigSettings = {};
  const { scripts, jest } = isRecord(manifest) ? manifest : {};
  if (isRecord(scripts) && scripts.test !== undefined)
    settings['scripts.test'] = JSON.stringify(scripts.test);
  if (isRecord(jest)) {
    for (const [key, value] of Object.entries(jest)) {
      if (JS_RUNNER_KEYS.has(key)) settings[`jest.${key}`] = JSON.stringify(value);
    }
  }
  return settings;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `key = value` lines of the given TOML tables; array values may span lines until their brackets close. */
function tomlSectionSettings(text: string, tables: string[]): ConfigSettings {
  const settings: ConfigSettings = {};
  let table: string | undefined;
  let pending: { key: string; value: string } | undefined;
  for (const line of text.split(/\r?\n/).map((raw) => stripComment(raw, '#'))) {
    if (pending !== undefined) {
      pending.value += ` ${line.trim()}`;
    } else {
      const header = /^\s*(\[\[?)\s*([^\]]+?)\s*\]/.exec(line);
      if (header) {
        table = header[1] === '[' ? header[2]?.replace(/["'\s]/g, '') : undefined;
        continue;
      }
      const entry = /^\s*([\w.-]+)\s*=\s*(.*)$/.exec(line);
      if (
        table === undefined ||
        !tables.includes(table) ||
        !entry?.[1] ||
        !PYTEST_KEYS.has(entry[1])
      )
        continue;
      pending = { key: `${table}.${entry[1]}`, value: entry[2] ?? '' };
    }
    if (bracketDepth(pending.value) <= 0) {
      settings[pending.key] = collapse(pending.value);
      pending = undefined;
    }
  }
  if (pending !== undefined) settings[pending.key] = collapse(pending.value);
  return settings;
}

/** `key = value` (or `key: value`) lines of one INI section, with indented continuation lines. */
function iniSectionSettings(text: string, section: string): ConfigSettings {
  const settings: ConfigSettings = {};
  let current: string | undefined;
  let key: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(line) || line.trim() === '') continue;
    const header = /^\[([^\]]+)\]/.exec(line);
    if (header) {
      [current, key] = [header[1]?.trim(), undefined];
      continue;
    }
    if (current !== section) continue;
    if (/^\s/.test(line) && key !== undefined) {
      settings[key] = collapse(`${settings[key]} ${line}`);
      continue;
    }
    const entry = /^([\w.-]+)\s*[=:]\s*(.*)$/.exec(line);
    key =
      entry?.[1] !== undefined && PYTEST_KEYS.has(entry[1]) ? `${section}.${entry[1]}` : undefined;
    if (key !== undefined) settings[key] = collapse(entry?.[2] ?? '');
  }
  return settings;
}

/** Every `collect_ignore`/`collect_ignore_glob` statement of a conftest.py, brackets spanning lines included. */
function conftestSettings(text: string): ConfigSettings {
  const statements = new Map<string, string[]>();
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const start = /^\s*(collect_ignore(?:_glob)?)\b(.*)$/.exec(lines[index] ?? '');
    if (!start?.[1]) continue;
    let statement = `${start[1]}${start[2] ?? ''}`;
    while (bracketDepth(statement) > 0 && index + 1 < lines.length)
      statement += ` ${lines[++index]?.trim()}`;
    statements.set(start[1], [...(statements.get(start[1]) ?? []), collapse(statement)]);
  }
  return Object.fromEntries([...statements].map(([key, list]) => [key, list.join('; ')]));
}

/**
 * Selection keys of a vitest/vite/jest config, by the path of object keys leading to them
 * (`test.exclude`). In vite/vitest files only the `test` block counts: vite has other `include`/`exclude` keys.
 */
function jsRunnerConfigSettings(filePath: string, text: string): ConfigSettings {
  const source = ts.createSourceFile(filePath, text, ts.ScriptTarget.Latest, true);
  const needsTestBlock = !/(?:^|\/)jest\.[^/]*$/.test(filePath);
  const settings: ConfigSettings = {};
  const visit = (node: TS.Node): void => {
    if (ts.isPropertyAssignment(node)) {
      const keyPath = propertyPath(node);
      const key = keyPath.at(-1) ?? '';
      const outsideTests =
        (needsTestBlock && !keyPath.includes('test')) ||
        keyPath.some((k) => k.startsWith('coverage'));
      if (JS_RUNNER_KEYS.has(key) && !outsideTests) {
        const dotted = keyPath.join('.');
        const value = collapse(node.initializer.getText(source));
        settings[dotted] = settings[dotted] === undefined ? value : `${settings[dotted]}; ${value}`;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return settings;
}

/** Names of the property assignments enclosing this one, outermost first. */
function propertyPath(node: TS.PropertyAssignment): string[] {
  const names: string[] = [];
  for (let current: TS.Node | undefined = node; current !== undefined; current = current.parent) {
    if (
      ts.isPropertyAssignment(current) &&
      (ts.isIdentifier(current.name) || ts.isStringLiteral(current.name))
    ) {
      names.unshift(current.name.text);
    }
  }
  return names;
}

function guardkitSettings(text: string): ConfigSettings {
  let config: unknown;
  try {
    config = parseYaml(text);
  } catch {
    return { [UNPARSEABLE]: 'does not parse as YAML' };
  }
  const toolchain = isRecord(config) ? config.toolchain : undefined;
  if (toolchain === undefined) return {};
  if (!isRecord(toolchain)) return { toolchain: JSON.stringify(toolchain) };
  return Object.fromEntries(
    Object.entries(toolchain).map(([key, value]) => [`toolchain.${key}`, JSON.stringify(value)]),
  );
}

function collapse(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}
