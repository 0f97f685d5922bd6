import { harnessReplacedMessage } from './harness-case.js';

/**
 * Python shared by coachgate's pytest reporter and its unittest recorder: what judges a Python
 * test (unittest's assertions, pytest's helpers when pytest runs, the builtins) read before the
 * tests or the code under test are imported, and the check made after every test. The originals
 * are held (an id can be reused once its object is freed) and compared by identity.
 *
 * The check binds what it calls when it is made, before anything is imported, so code that
 * replaces `builtins.getattr` or `vars` with one handing back the originals does not blind it.
 * Each holder's own names are read from its dictionary by one itemgetter and compared by identity
 * in C (callgrind: the pytest reporter's check went from 214,000 instructions a test, getattr in a
 * Python loop, to 122,000); the holder's type is compared too, so a module or class given a
 * `__getattribute__` of its own is seen. Names a holder inherits go through getattr.
 */
export const PYTHON_HARNESS_SOURCE = String.raw`
from operator import is_not as _is_not, itemgetter as _itemgetter

MISSING = object()

def harness_entries(pytest=None):
    import builtins, unittest
    entries = []
    for name in dir(unittest.TestCase):
        if name.startswith(('assert', 'fail')):
            entries.append(('unittest.TestCase.' + name, unittest.TestCase, name))
    for name in list(vars(builtins)):
        if not name.startswith('_') or name == '__import__':
            entries.append(('builtins.' + name, builtins, name))
    if pytest is not None:
        for name in ('raises', 'approx', 'fail', 'skip', 'xfail', 'warns', 'importorskip'):
            entries.append(('pytest.' + name, pytest, name))
    return [(label, holder, name, getattr(holder, name, MISSING))
            for label, holder, name in entries]

def harness_intact(entries, getattr=getattr, type=type, vars=vars, any=any, map=map,
                   is_not=_is_not, KeyError=KeyError):
    groups = {}
    inherited = []
    for label, holder, name, value in entries:
        if name in vars(holder):
            groups.setdefault(id(holder), (holder, type(holder), []))[2].append(name)
        else:
            inherited.append((holder, name, value))
    owned = []
    for holder, kind, names in groups.values():
        read = _itemgetter(*names, names[0])  # two names at least, so it always gives a tuple
        owned.append((holder, kind, read, read(vars(holder))))
    def intact():
        try:
            for holder, kind, read, before in owned:
                if type(holder) is not kind or any(map(is_not, read(vars(holder)), before)):
                    return False
        except KeyError:
            return False  # a name deleted
        return not any(getattr(holder, name, MISSING) is not value
                       for holder, name, value in inherited)
    return intact

def harness_message(test_id, changed):
    return ${JSON.stringify(harnessReplacedMessage('%s', ['%s']))} % (test_id, ', '.join(changed))

def harness_replaced(entries, intact, told, getattr=getattr, sorted=sorted):
    # The labels replaced since the last call, each told once; named one by one only when the
    # check finds something.
    if intact():
        return []
    changed = sorted(label for label, holder, name, value in entries
                     if getattr(holder, name, MISSING) is not value and label not in told)
    told.update(changed)
    return changed
`;
