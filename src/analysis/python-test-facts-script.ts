/**
 * Python source run by `python3 -c`: reads `[{path, text}]` as JSON on stdin and writes, in the same order,
 * each file's test facts or `{"error": why}` when it could not be analysed. Uses only the standard library so any
 * python3 works, whatever the project's own environment.
 */
export const PYTHON_TEST_FACTS_SCRIPT = String.raw`
import ast, hashlib, json, sys, warnings

warnings.simplefilter("ignore")

PYTEST_MARKS = {"skip", "skipif", "xfail"}
DOTTED_SKIPS = {
    "pytest.skip": "pytest.skip",
    "pytest.xfail": "pytest.xfail",
    "pytest.importorskip": "pytest.importorskip",
    "unittest.skip": "unittest.skip",
    "unittest.skipIf": "unittest.skipIf",
    "unittest.skipUnless": "unittest.skipUnless",
    "unittest.expectedFailure": "unittest.expectedFailure",
    "unittest.SkipTest": "unittest.SkipTest",
}
# Names distinctive enough to count bare, as imported with "from unittest import ...".
BARE_SKIPS = {"skipIf", "skipUnless", "expectedFailure", "SkipTest"}
ASSERTION_HELPERS = {"pytest.raises", "pytest.warns", "pytest.approx"}


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def is_sys_modules(node):
    name = dotted(node)
    if name is not None:
        return name == "sys.modules" or name.endswith(".sys.modules")
    return isinstance(node, ast.Constant) and node.value == "sys.modules"


def module_name(node):
    if type(node).__name__ == "Index":  # Python 3.8 wraps subscripts
        node = node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return "<dynamic>"


def dict_keys(call, position):
    keys = [kw.arg for kw in call.keywords if kw.arg is not None]
    if len(call.args) > position and isinstance(call.args[position], ast.Dict):
        keys += [module_name(k) if k is not None else "<dynamic>" for k in call.args[position].keys]
    elif len(call.args) > position:
        keys.append("<dynamic>")
    return keys


def count_assertions(function):
    count = 0
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assert):
                count += 1
            elif isinstance(node, ast.Call):
                func = node.func
                last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if last.startswith("assert") or dotted(func) in ASSERTION_HELPERS:
                    count += 1
    return count


def body_fingerprint(function):
    # ast.dump leaves out names of the function itself, line numbers and indentation: a renamed or
    # re-indented (wrapped in a class) test keeps its fingerprint.
    module = ast.Module(body=function.body, type_ignores=[])
    return hashlib.sha256(ast.dump(module).encode("utf-8")).hexdigest()[:16]


def is_parametrized(function):
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (dotted(target) or "").endswith("parametrize"):
            return True
    # unittest's table: a loop whose cases each run under "with self.subTest(...)".
    return any(
        isinstance(loop, ast.For)
        and any(
            isinstance(node, ast.With)
            and any(
                isinstance(item.context_expr, ast.Call)
                and (dotted(item.context_expr.func) or "").endswith(".subTest")
                for item in node.items
            )
            for node in ast.walk(loop)
        )
        for loop in ast.walk(function)
    )


class Facts(ast.NodeVisitor):
    def __init__(self):
        self.tests, self.skips, self.module_stubs = [], [], []
        self.owner = None  # the test, or class, the visited code belongs to
        self.depth = 0  # 0 = module level, 1 = directly in a module-level class

    def occurrence(self, node, **fields):
        fields["line"] = node.lineno
        if self.owner is not None:
            fields["test"] = self.owner
        return fields

    def skip(self, node, marker):
        self.skips.append(self.occurrence(node, marker=marker))

    def stub(self, node, module, via):
        self.module_stubs.append(self.occurrence(node, module=module, via=via))

    def visit_ClassDef(self, node):
        outer_owner, outer_depth = self.owner, self.depth
        self.owner = node.name if outer_owner is None else outer_owner
        self.depth += 1
        self.visit_decorators(node)
        for statement in node.body:
            self.visit(statement)
        self.owner, self.depth = outer_owner, outer_depth

    def visit_FunctionDef(self, node):
        outer_owner, outer_depth = self.owner, self.depth
        if node.name.startswith("test") and self.depth <= 1:
            name = node.name if self.depth == 0 else self.owner + "." + node.name
            test = {"name": name, "line": node.lineno, "assertions": count_assertions(node)}
            test["body"] = body_fingerprint(node)
            if is_parametrized(node):
                test["parametrized"] = True
            self.tests.append(test)
            self.owner = name
        self.depth += 2  # nothing nested in a function is collected as a test
        self.visit_decorators(node)
        for child in ast.iter_child_nodes(node):
            if child not in node.decorator_list:
                self.visit(child)
        self.owner, self.depth = outer_owner, outer_depth

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_decorators(self, node):
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Name) and target.id == "skip":
                self.skip(decorator, "unittest.skip")
            self.visit(decorator)

    def visit_Attribute(self, node):
        name = dotted(node)
        if name is not None:
            parts = name.split(".")
            if len(parts) >= 2 and parts[-2] == "mark" and parts[-1] in PYTEST_MARKS:
                self.skip(node, "pytest.mark." + parts[-1])
            elif name in DOTTED_SKIPS:
                self.skip(node, DOTTED_SKIPS[name])
            elif parts[-1] == "skipTest":
                self.skip(node, "skipTest")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in BARE_SKIPS:
            self.skip(node, "unittest." + node.id)

    def visit_Assign(self, node):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and is_sys_modules(target.value):
                self.stub(node, module_name(target.slice), "sys.modules[...]")
        self.generic_visit(node)

    def visit_Call(self, node):
        name = dotted(node.func) or ""
        last = name.rsplit(".", 1)[-1]
        if name.endswith("sys.modules.update"):
            for module in dict_keys(node, 0):
                self.stub(node, module, "sys.modules.update")
        elif name.endswith("sys.modules.setdefault") and node.args:
            self.stub(node, module_name(node.args[0]), "sys.modules.setdefault")
        elif last == "setitem" and len(node.args) >= 2 and is_sys_modules(node.args[0]):
            self.stub(node, module_name(node.args[1]), name)
        elif name.endswith("patch.dict") and node.args and is_sys_modules(node.args[0]):
            for module in dict_keys(node, 1):
                self.stub(node, module, name + "(sys.modules)")
        self.generic_visit(node)


def facts_of(text):
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        return {"error": "the file does not parse as Python (SyntaxError: %s (line %s))" % (error.msg, error.lineno)}
    except (ValueError, RecursionError) as error:
        return {"error": "the file does not parse as Python (%s: %s)" % (type(error).__name__, error)}
    try:
        facts = Facts()
        facts.visit(tree)
    except Exception as error:  # one odd file must not cost the whole batch its analysis
        return {"error": "the ast analysis failed (%s: %s)" % (type(error).__name__, error)}
    return {"tests": facts.tests, "skips": facts.skips, "focuses": [], "module_stubs": facts.module_stubs}


files = json.loads(sys.stdin.buffer.read().decode("utf-8"))
sys.stdout.write(json.dumps([facts_of(f["text"]) for f in files]))
`;
