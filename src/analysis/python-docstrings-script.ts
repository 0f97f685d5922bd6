/**
 * Python source run by `python3 -c`: reads `[{path, base, player}]` as JSON on stdin and writes, per
 * file, `{text}`: the base's source with the Player's docstrings spliced in, or `{text: null}` when no
 * docstring holding a doctest example (`>>>`) differs, or `{error}` when a version (or the result)
 * does not parse. A docstring that is no string literal on its own (parts in parentheses) is left.
 * Docstrings are paired by owner: the module, and each class and function by qualified name and
 * occurrence (a second `def f` in one scope is `f#1`). An owner the base lacks gets nothing; a base
 * owner without a docstring gets the Player's as its first statement, at its body's indentation.
 * Positions are the parser's (UTF-8 byte columns), so the base's code is kept byte for byte.
 */
export const PYTHON_DOCSTRINGS_SCRIPT = String.raw`
import ast, json, re, sys, warnings

warnings.simplefilter("ignore")
OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def owners(tree):
    found = {"": tree}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, OWNERS):
                name = key = prefix + child.name
                count = 0
                while key in found:
                    count += 1
                    key = "%s#%d" % (name, count)
                found[key] = child
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def docstring(node):
    body = getattr(node, "body", None) or []
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        if isinstance(first.value.value, str):
            return first.value
    return None


class Source:
    def __init__(self, text):
        self.data = text.encode("utf-8")
        self.lines = self.data.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.tree = ast.parse(text)

    def at(self, line, column):
        return self.starts[line - 1] + column

    def span(self, node):
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno, node.end_col_offset)

    def text(self, node):
        start, end = self.span(node)
        return self.data[start:end]

    def literal(self, node):
        # A docstring in parentheses spans their inside only: no statement on its own.
        text = self.text(node)
        try:
            alone = ast.parse(text.decode("utf-8"), mode="eval").body
        except SyntaxError:
            return None
        return text if isinstance(alone, ast.Constant) and isinstance(alone.value, str) else None


def insertion(base, owner, text):
    """Where a docstring goes in an owner without one, and what is inserted there."""
    body = owner.body
    if not body:
        return 0, text + b"\n"
    first = body[0]
    line = min([first.lineno] + [item.lineno for item in getattr(first, "decorator_list", [])])
    if not isinstance(owner, ast.Module) and line <= owner.lineno:
        return None  # a one-line body (def f(): return 1): left as the base has it
    indent = re.match(rb"[ \t]*", base.lines[line - 1]).group(0)
    return base.starts[line - 1], indent + text + b"\n"


def splice(base_text, player_text):
    base, player = Source(base_text), Source(player_text)
    base_owners = owners(base.tree)
    edits = []
    for key, node in owners(player.tree).items():
        owner = base_owners.get(key)
        new = docstring(node)
        if owner is None or new is None or isinstance(owner, ast.ClassDef) != isinstance(node, ast.ClassDef):
            continue
        old = docstring(owner)
        if ">>>" not in new.value and (old is None or ">>>" not in old.value):
            continue
        text = player.literal(new)
        if text is None:
            continue
        if old is None:
            edit = insertion(base, owner, text)
            if edit is not None:
                edits.append((edit[0], edit[0], edit[1]))
        elif base.text(old) != text:
            edits.append(base.span(old) + (text,))
    if not edits:
        return None
    data = base.data
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text + data[end:]
    spliced = data.decode("utf-8")
    ast.parse(spliced)  # a splice that broke the base's file would fail every test there
    return spliced


results = []
for item in json.load(sys.stdin):
    try:
        results.append({"text": splice(item["base"], item["player"])})
    except (SyntaxError, ValueError) as error:
        results.append({"error": "%s: %s" % (type(error).__name__, error)})
json.dump(results, sys.stdout)
`;
