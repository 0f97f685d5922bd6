/**
 * Python for coachgate's pytest reporter: each parametrized case's parameter values
 * (`item.callspec.params`), so a case is known by its test function and values across runs whose
 * positional ids (`case11`, `arg0-1`) moved because the Player inserted or removed a case
 * (src/runner/stable-test-id.ts). The values are written from their structure and never through
 * the project's code (no `__repr__`, `__eq__`, `__iter__` or property of its runs): the tests see
 * no call they would not see raw. Builtin scalars by their builtin repr, builtin containers item by
 * item, an instance by its class and its own attributes (`__dict__`), a class or function by its
 * qualified name. A value with no such structure (a C type's instance, a slotted class, a
 * recursive or huge value) leaves its case without values: it is then matched by its id.
 */
export const CASE_VALUES_SOURCE = String.raw`
class Unplain(Exception):
    pass

PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes)
VALUES_BUDGET = 4000
VALUES_SHOWN = 300

def qualified_name(thing):
    # A class's names as type keeps them: a metaclass's own attributes are the project's code. A
    # function's are its own slots.
    if isinstance(thing, type):
        names = [type.__dict__[name].__get__(thing, type) for name in ('__module__', '__qualname__')]
    else:
        names = [thing.__module__, thing.__qualname__]
    return '%s.%s' % tuple(names)

def own_attributes(value, kind):
    # The instance's __dict__ as the interpreter keeps it (a C descriptor): a class that defines
    # its own __dict__ (a property, code of the project's) is not asked.
    import types
    for klass in kind.__mro__:
        slot = vars(klass).get('__dict__')
        if slot is not None:
            if type(slot) not in (types.GetSetDescriptorType, types.MemberDescriptorType):
                raise Unplain
            fields = slot.__get__(value, kind)
            if type(fields) is not dict:
                raise Unplain
            return fields
    raise Unplain

def plain_text(value, budget, depth=0):
    # budget: a one-item list of the characters still allowed, shared by the whole case.
    import enum, types
    kind = type(value)
    if depth > 8:
        raise Unplain
    if kind in PLAIN_TYPES:
        text = repr(value)
    elif kind is tuple or kind is list:
        items = [plain_text(item, budget, depth + 1) for item in value]
        text = ('(%s,)' if kind is tuple and len(items) == 1 else '(%s)' if kind is tuple
                else '[%s]') % ', '.join(items)
    elif kind is dict:
        text = '{%s}' % ', '.join('%s: %s' % (plain_text(key, budget, depth + 1),
                                              plain_text(item, budget, depth + 1))
                                  for key, item in value.items())
    elif kind is set or kind is frozenset:
        text = '%s({%s})' % (kind.__name__,
                             ', '.join(sorted(plain_text(item, budget, depth + 1)
                                              for item in value)))
    elif isinstance(value, type) or kind in (types.FunctionType, types.BuiltinFunctionType):
        text = qualified_name(value)
    elif issubclass(kind, enum.Enum):
        # By name: its other attributes hold its place among the members, which an added one moves.
        name = own_attributes(value, kind).get('_name_')
        if type(name) is not str:
            raise Unplain
        text = '%s.%s' % (qualified_name(kind), name)
    else:
        fields = own_attributes(value, kind)
        text = '%s(%s)' % (qualified_name(kind), ', '.join(
            '%s=%s' % (name, plain_text(item, budget, depth + 1))
            for name, item in fields.items() if type(name) is str))
    budget[0] -= len(text)
    if budget[0] < 0:
        raise Unplain
    return text

def case_values(item):
    # The case's test function (its node id without the case's brackets) and its values, or None.
    callspec = getattr(item, 'callspec', None)
    params = getattr(callspec, 'params', None)
    suffix = '[%s]' % getattr(callspec, 'id', '')
    if type(params) is not dict or not params or not item.nodeid.endswith(suffix):
        return None
    budget = [VALUES_BUDGET]
    try:
        text = ', '.join('%s=%s' % (name, plain_text(value, budget))
                         for name, value in params.items())
    except Exception:  # Unplain, RecursionError, a value that changed while it was read
        return None
    if len(text) > VALUES_SHOWN:
        import hashlib
        digest = hashlib.sha256(text.encode('utf-8', 'backslashreplace')).hexdigest()[:16]
        text = '%s… #%s' % (text[:VALUES_SHOWN], digest)
    return item.nodeid[:-len(suffix)], text
`;
