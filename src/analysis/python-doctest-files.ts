import path from 'node:path';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { SandboxUnavailableError } from '../sandbox/run.js';
import { runPythonScript } from './python-test-facts.js';

/**
 * Python source run by `python3 -c`: reads `[text]` as JSON on stdin and writes, in the same order,
 * the text files each module hands to doctest (`doctest.DocFileSuite(*paths)`, `doctest.testfile(
 * path)`, under the names the module imports or assigns them to), read from the syntax tree: each literal path with the
 * call's `module_relative` and `package` keywords. A module that does not parse names none.
 */
const PYTHON_DOCTEST_FILES_SCRIPT = String.raw`
import ast, json, sys, warnings

warnings.simplefilter("ignore")
TAKES_ALL = {'DocFileSuite': True, 'testfile': False}

def called(node, aliases):
    function = node.func
    if isinstance(function, ast.Attribute):
        return function.attr if function.attr in TAKES_ALL else None
    return aliases.get(getattr(function, 'id', None))

def named(text):
    tree = ast.parse(text)
    # The names the module gives doctest's two (from doctest import DocFileSuite as files).
    aliases = {name: name for name in TAKES_ALL}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == 'doctest':
            for alias in node.names:
                if alias.name in TAKES_ALL:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Attribute, ast.Name)):
            # suite = doctest.DocFileSuite
            value = node.value
            original = value.attr if isinstance(value, ast.Attribute) else aliases.get(value.id)
            if original in TAKES_ALL:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        aliases[target.id] = original
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or called(node, aliases) is None:
            continue
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        relative = keywords.get('module_relative')
        package = keywords.get('package')
        arguments = node.args if TAKES_ALL[called(node, aliases)] else node.args[:1]
        for argument in arguments:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.append({
                    'name': argument.value,
                    'module_relative': not (isinstance(relative, ast.Constant)
                                            and relative.value is False),
                    'package': package.value if isinstance(package, ast.Constant)
                               and isinstance(package.value, str) else None})
    return found

results = []
for text in json.load(sys.stdin):
    try:
        results.append(named(text))
    except Exception:
        results.append([])
json.dump(results, sys.stdout)
`;

interface NamedFile {
  name: string;
  module_relative: boolean;
  package: string | null;
}

/**
 * The repository paths of the text files the given modules run as doctests, resolved as doctest
 * resolves them: a module-relative path from the calling module's directory (or the named
 * package's, from the repository's root), any other from the repository's root, where the tests
 * run. Empty when python3 cannot run.
 */
export async function pythonDoctestFiles(
  modules: readonly { path: string; text: string }[],
  python: string,
  policy: SandboxPolicy,
): Promise<Set<string>> {
  const found = new Set<string>();
  if (modules.length === 0) return found;
  const run = await runPythonScript(
    PYTHON_DOCTEST_FILES_SCRIPT,
    modules.map((module) => module.text),
    python,
    policy,
  );
  if (run instanceof SandboxUnavailableError || run.failed) return found;
  const parsed = readJson(run.stdout);
  modules.forEach((module, index) => {
    for (const file of parsed?.[index] ?? []) {
      const from = !file.module_relative
        ? ''
        : file.package !== null
          ? file.package.split('.').join('/')
          : path.posix.dirname(module.path);
      const resolved = path.posix.normalize(path.posix.join(from, file.name));
      if (!resolved.startsWith('../')) found.add(resolved);
    }
  });
  return found;
}

function readJson(stdout: string): NamedFile[][] | undefined {
  try {
    const parsed: unknown = JSON.parse(stdout);
    return Array.isArray(parsed) ? (parsed as NamedFile[][]) : undefined;
  } catch {
    return undefined;
  }
}
