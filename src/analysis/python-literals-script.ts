/**
 * Python source run by `python3 -c`: reads `{tests: [{path, text}], product: [{path, text}]}` as JSON
 * on stdin and writes `{inputs, product}`. `inputs`: the literals the tests hand to calls and
 * assertions (`[value, file index, line]`). `product`: per file, its literal uses (`[value, line,
 * role, table]`; role `comparison`, `branch`, `key` or `element`, table the line of the outermost
 * display holding it) and every literal it holds, or `{"error": why}`. A value is written as its
 * canonical text: a string as JSON, a number as its shortest form, a tuple as `(a, b)`.
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
    return found


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

    def table(node, role):
        members = []
        leaves(node, members)
        keys = {id(key) for key in getattr(node, "keys", [])}
        for child in ast.walk(node):
            inside.add(id(child))
        found.extend([value, line, role, node.lineno] for value, line in members)
        if isinstance(node, ast.Dict):
            for key in node.keys:
                value = literal(key) if key is not None else None
                if value is not None:
                    found.append([value, key.lineno, "key", node.lineno])

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
                    table(operand, "comparison")
                    continue
                value = literal(operand)
                if value is not None:
                    found.append([value, operand.lineno, "comparison", None])
                    inside.update(id(child) for child in ast.walk(operand))
        elif isinstance(node, MATCH_VALUE):
            value = literal(node.value)
            if value is not None:
                found.append([value, node.lineno, "branch", None])
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
        product.append({"uses": uses(parse(item["path"], item["now"])),
                        "held": held(parse(item["path"], item["base"])) if item.get("base") else []})
    except (SyntaxError, ValueError) as error:
        product.append({"error": str(error)})
json.dump({"inputs": inputs, "product": product}, sys.stdout)
`;
