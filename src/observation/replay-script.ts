/**
 * The Python that replays recorded calls outside the harness: started by src/observation/replay.ts
 * in a fresh interpreter (no test runner imported, runner variables removed, `sys.argv` empty), in
 * the trusted run's directory with its import path. It imports the modules the calls went to, then:
 * - alone: each distinct call in a child forked from that fresh state, called twice in a row;
 * - session: every recorded call in the run's order, in this process, as the tests made them.
 * Each call has the environment variables and working directory its test gave it. Results are
 * compared as plain values (exact types); a call that cannot reach a file it used (OSError) is not
 * compared: the test's temporary files are gone. The answer is one JSON file.
 */
export const REPLAY_SOURCE = String.raw`
import ast, importlib, json, os, signal, sys

ALONE_LIMIT = 400
CALL_SECONDS = 5

def load(text):
    try:
        return ast.literal_eval(text)
    except Exception:
        return text  # nan, inf: compared by their repr

def same(a, b):
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(map(same, a, b))
    if kind is dict:
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if kind is float and a != a:
        return b != b
    return a == b

BASE_ENVIRON = dict(os.environ)
BASE_CWD = os.getcwd()
applied = [None]

def surround(call):
    # The variables and directory the test gave the call, set only when they change.
    wanted = (json.dumps(call.get('env')), call.get('cwd', BASE_CWD))
    if applied[0] == wanted:
        return
    applied[0] = wanted
    environ = dict(BASE_ENVIRON)
    env = call.get('env') or {}
    environ.update(env.get('set', {}))
    for name in env.get('unset', []):
        environ.pop(name, None)
    os.environ.clear()
    os.environ.update(environ)
    try:
        os.chdir(wanted[1])
    except OSError:
        os.chdir(BASE_CWD)

def outcome(function, call):
    surround(call)
    try:
        value = function(*load(call['args']), **load(call['kwargs']))
    except OSError as error:
        return {'unavailable': type(error).__name__}
    except BaseException as error:
        return {'raised': type(error).__name__}
    if call.get('opaque'):
        return {'opaque': True}
    return {'value': value}

def shown(result):
    return repr(result['value']) if 'value' in result else 'raises ' + result.get('raised', '?')

def agrees(result, call):
    if call.get('opaque') or 'unavailable' in result:
        return True
    if call.get('raised'):
        return 'raised' in result
    return 'value' in result and same(result['value'], load(call['result']))

def resolve(modules, call):
    target = modules.get(call['module'])
    for part in call['function'].split('.'):
        target = getattr(target, part, None)
    return target if callable(target) else None

def alone(function, call):
    # Twice in a row, from the state right after import, in a child of this process.
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        signal.alarm(CALL_SECONDS * 2)
        first = outcome(function, call)
        second = outcome(function, call)
        answer = {'first': shown(first), 'second': shown(second),
                  'agrees': agrees(first, call), 'repeats': same_outcome(first, second)}
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, 'rb') as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else None

def same_outcome(first, second):
    if 'value' in first or 'value' in second:
        return 'value' in first and 'value' in second and same(first['value'], second['value'])
    return first == second

def main(calls_path, answer_path):
    with open(calls_path, encoding='utf-8') as handle:
        lines = [json.loads(line) for line in handle if line.endswith('\n')]
    end = next((line for line in lines if line['event'] == 'end'), None)
    if end:
        sys.path[:] = end['sys_path']
    sys.argv = ['']
    modules, failed = {}, []
    for line in lines:
        name = line.get('module')
        if line['event'] == 'call' and name not in modules:
            try:
                modules[name] = importlib.import_module(name)
            except BaseException as error:
                modules[name] = None
                failed.append('%s: %s' % (name, type(error).__name__))
    calls = [(index, line) for index, line in enumerate(lines) if line['event'] == 'call']
    answer = {'import_failed': failed, 'alone': {}, 'session': {}}
    seen = set()
    for index, call in calls:
        key = (call['module'], call['function'], call['args'], call['kwargs'])
        function = resolve(modules, call)
        if key in seen or function is None or call.get('opaque') or len(seen) >= ALONE_LIMIT:
            continue
        seen.add(key)
        result = alone(function, call)
        if result:
            answer['alone'][index] = result
    for index, call in calls:
        function = resolve(modules, call)
        if function is None:
            continue
        result = outcome(function, call)
        answer['session'][index] = {'outside': shown(result), 'agrees': agrees(result, call)}
    with open(answer_path, 'w', encoding='utf-8') as handle:
        json.dump(answer, handle)

if __name__ == '__main__':
    main(*sys.argv[1:3])
`;

export const REPLAY_FILE = 'coachgate_replay.py';
