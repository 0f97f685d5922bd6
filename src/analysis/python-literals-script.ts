/**
 * Python source run by `python3 -c`: reads `{tests: [{path, text}], product: [{path, text}]}` as JSON
 * on stdin and writes `{inputs, product}`. `inputs`: the literals the tests hand to calls and
 * assertions (`[value, file index, line]`), plus the truth an assertion expects of a call (`assert
 * f(x)` gives `True`, `assert not f(x)` gives `False`), so a product branch can be paired with its
 * expected answer. `product`: per file, its literal uses (`[value, line, role, table, scope]`; role
 * `comparison`, `branch`, `key` or `element`, table the line of the outermost display holding it,
 * scope the last line of the statement, case or entry the use decides), every literal it holds now
 * with its line (booleans included) and every literal its base held, or `{"error": why}`. A value is
 * written as its canonical text: a string as JSON, a number as its shortest form, a tuple as `(a, b)`,
 * a boolean as `True`/`False`.
 */
export const PYTHON_LITERALS_SCRIPT = String.raw`
import ast, json, sys, warnings

warnings.simplefilter("ignore")
# match/case arrived in 3.10.
MATCH_VALUE = getattr(ast, "MatchValue", ())


def number(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def literal(node):
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, (int, float)):
            return number(value)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal(node.operand)
        return "-" + inner if inner is not None and not inner.startswith('"') else None
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        parts = [literal(item) for item in node.elts]
        return None if None in parts else "(" + ", ".join(parts) + ")"
    return None


def truth(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return str(node.value)
    return None


def leaves(node, found):
    value = literal(node)
    if value is not None:
        found.append((value, node.lineno))
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for item in node.elts:
            leaves(item, found)
    elif isinstance(node, ast.Dict):
        for item in [*node.keys, *node.values]:
            if item is not None:
                leaves(item, found)


def test_inputs(tree):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            arguments = [*node.args, *[kw.value for kw in node.keywords]]
            for argument in arguments:
                leaves(argument, found)
            if len(node.args) > 1:
                value = literal(ast.Tuple(elts=node.args))
                if value is not None:
                    found.append((value, node.lineno))
        elif isinstance(node, ast.Assert):
            # An assertion's comparison; a comparison elsewhere in a test is its own logic.
            for compare in ast.walk(node.test):
                if isinstance(compare, ast.Compare):
                    for operand in [compare.left, *compare.comparators]:
                        leaves(operand, found)
                        expected = truth(operand)
                        if expected is not None:
                            found.append((expected, node.lineno))
            test = node.test
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            if isinstance(test.operand if negated else test, ast.Call):
                found.append((str(not negated), node.lineno))
    return found


def now_literals(tree):
    found = []
    for node in ast.walk(tree):
        value = literal(node) or truth(node)
        if value is not None:
            found.append([value, node.lineno])
    return found


def parents(tree):
    above = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            above[id(child)] = node
    return above


def scope_end(node, above):
    # The last line of what a use decides: its statement (an if with its body), case or entry.
    while id(node) in above and not isinstance(node, ast.stmt):
        node = above[id(node)]
    return getattr(node, "end_lineno", None)


def held(tree):
    values = set()
    for node in ast.walk(tree):
        value = literal(node)
        if value is not None:
            values.add(value)
    return sorted(values)


def uses(tree):
    found = []
    inside = set()
    above = parents(tree)

    def table(node, role, scope=None):
        members = []
        leaves(node, members)
        for child in ast.walk(node):
            inside.add(id(child))
        found.extend([value, line, role, node.lineno, scope] for value, line in members)
        if isinstance(node, ast.Dict):
            for key, entry in zip(node.keys, node.values):
                value = literal(key) if key is not None else None
                if value is not None:
                    found.append([value, key.lineno, "key", node.lineno, entry.end_lineno])

    cases = {}
    for node in ast.walk(tree):
        for case in getattr(node, "cases", []):
            cases[id(case.pattern)] = case.body[-1].end_lineno
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Dict):
            table(node, "element")
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            table(node, "element")
        elif isinstance(node, ast.Compare):
            for op, operand in zip([None, *node.ops], [node.left, *node.comparators]):
                containers = (ast.List, ast.Tuple, ast.Set, ast.Dict)
                if isinstance(op, (ast.In, ast.NotIn)) and isinstance(operand, containers):
                    table(operand, "comparison", scope_end(node, above))
                    continue
                value = literal(operand)
                if value is not None:
                    scope = scope_end(node, above)
                    found.append([value, operand.lineno, "comparison", None, scope])
                    inside.update(id(child) for child in ast.walk(operand))
        elif isinstance(node, MATCH_VALUE):
            value = literal(node.value)
            if value is not None:
                found.append([value, node.lineno, "branch", None, cases.get(id(node))])
    return found


def parse(path, text):
    return ast.parse(text, filename=path)


request = json.load(sys.stdin)
inputs = []
for index, item in enumerate(request["tests"]):
    try:
        tree = parse(item["path"], item["text"])
    except (SyntaxError, ValueError):
        continue
    inputs.extend([value, index, line] for value, line in test_inputs(tree))
product = []
for item in request["product"]:
    try:
        tree = parse(item["path"], item["now"])
        product.append({"uses": uses(tree), "literals": now_literals(tree),
                        "held": held(parse(item["path"], item["base"])) if item.get("base") else []})
    except (SyntaxError, ValueError) as error:
        product.append({"error": str(error)})
json.dump({"inputs": inputs, "product": product}, sys.stdout)
`;
