/**
 * Python source run by `python3 -c`: reads `[text]` as JSON on stdin and writes, in the same order,
 * each module's doctest examples or `{"error": why}` (an item `{"file": text}` is a text file that
 * doctest runs whole: `DocFileSuite`, `testfile`). The places are the ones doctest's own
 * `DocTestFinder` looks in, read from the syntax tree (the product is not imported): the module's
 * docstring, the docstrings of its classes and functions and of their members (nested classes,
 * methods, static and class methods, properties; not functions inside functions), and the strings
 * of a module-level `__test__` dict. Each string is split by doctest's own `DocTestParser`, so an
 * example is what doctest runs, wherever its prompt sits in the string. Standard library only.
 */
export const PYTHON_DOCTESTS_SCRIPT = String.raw`
import ast, doctest, json, sys, warnings

warnings.simplefilter("ignore")
PARSER = doctest.DocTestParser()

def texts(tree):
    # (owner, string node) for every string DocTestFinder would read.
    found = []
    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + node.name
                doc = docstring(node)
                if doc is not None:
                    found.append((name, doc))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name + '.')
            elif isinstance(node, ast.Assign) and prefix == '' and any(
                    isinstance(target, ast.Name) and target.id == '__test__'
                    for target in node.targets) and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values):
                    if (isinstance(key, ast.Constant) and isinstance(key.value, str)
                            and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                        found.append(('__test__.' + key.value, value))
    module = docstring(tree)
    if module is not None:
        found.append(('<module>', module))
    visit(tree.body, '')
    return found

def docstring(node):
    body = getattr(node, 'body', None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].value
    return None

def examples(text):
    tree = ast.parse(text)
    found = []
    for owner, node in texts(tree):
        try:
            parsed = PARSER.get_examples(node.value, owner)
        except ValueError:
            continue  # doctest itself would refuse the string
        for example in parsed:
            # As doctest compares them: the parser has taken the docstring's indent away.
            source, want = example.source.rstrip('\n'), example.want.rstrip('\n')
            found.append({'line': node.lineno + example.lineno, 'owner': owner,
                          'text': source + '\n=> ' + want})
    return found

def file_examples(text):
    # A text file doctest runs whole (DocFileSuite, testfile): one string, its lines the file's.
    return [{'line': example.lineno + 1, 'owner': '<file>',
             'text': example.source.rstrip('\n') + '\n=> ' + example.want.rstrip('\n')}
            for example in PARSER.get_examples(text, '<file>')]

results = []
for text in json.load(sys.stdin):
    try:
        results.append(file_examples(text['file']) if isinstance(text, dict) else examples(text))
    except Exception as error:
        results.append({'error': '%s: %s' % (type(error).__name__, error)})
json.dump(results, sys.stdout)
`;
