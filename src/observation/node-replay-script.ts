import { PLAIN_VALUE_SOURCE } from './plain-value-js.js';

/**
 * The JavaScript that replays the calls a node test run recorded (src/runner/node-call-recorder.ts)
 * outside the harness, started by src/observation/replay.ts as `node <script> run <calls> <answer>`
 * with no runner loaded and the runner's variables removed, in the run's directory. Each test
 * process of the run started fresh, so its calls are replayed in their order in a fresh node
 * process of their own (session); and each distinct call twice in a row in one more fresh process
 * (alone). Those processes see a bare `process.argv` (`[node]`) and no test module; each call gets
 * the variables and directory its test gave it. Results are compared as canonical plain-value
 * texts (a promise the test got is awaited, and its two values in a row compared); a call that failed to reach a file (a Node system error: the test's temporary files are
 * gone) is not compared. The answer is one JSON file, by index of the call's line.
 */
export const NODE_REPLAY_SOURCE = String.raw`// coachgate: replays the tests' calls outside the harness.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
${PLAIN_VALUE_SOURCE}
const ALONE_LIMIT = 400;
const CHILD_MS = 60000;
const [mode, callsPath, target] = process.argv.slice(2);
const script = process.argv[1];
process.argv.splice(1);
const lines = fs.readFileSync(callsPath, 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line));
const calls = lines.map((line, index) => [index, line]).filter(([, line]) => line.event === 'call');

const decode = (text) => (text === 'undefined' ? undefined : JSON.parse(text));
const baseEnv = { ...process.env };
const baseCwd = process.cwd();
const surround = (call) => {
  for (const name of Object.keys(process.env)) if (!(name in baseEnv)) delete process.env[name];
  Object.assign(process.env, baseEnv);
  const env = call.env || { set: {}, unset: [] };
  Object.assign(process.env, env.set);
  for (const name of env.unset) delete process.env[name];
  try {
    process.chdir(call.cwd || baseCwd);
  } catch {
    process.chdir(baseCwd);
  }
};
const outcome = async (entry, call) => {
  surround(call);
  let value;
  try {
    value = entry.fn.apply(entry.holder, decode(call.args));
    // A promise the test got: its settled value, compared between two calls in a row only.
    if (call.promise) value = await value;
  } catch (error) {
    if (error && typeof error.syscall === 'string') return { unavailable: true };
    return { raised: (error && error.name) || typeof error };
  }
  if (value && typeof value.then === 'function') value.then(undefined, () => {});
  if (call.opaque && !call.promise) return { opaque: true };
  return { value: plainText(value) ?? '(not a plain value)' };
};
const shown = (result) => ('value' in result ? result.value : 'raises ' + (result.raised || '?'));
// A prepared call (src/runner/node-call-recorder.ts): its test's environment is not the replay's.
const agrees = (result, call) => {
  if (call.opaque || call.prepared || result.unavailable) return true;
  if (call.raised) return 'raised' in result;
  return result.value === call.result;
};
const sameOutcome = (first, second) =>
  'value' in first || 'value' in second ? first.value === second.value
    : JSON.stringify(first) === JSON.stringify(second);

const entries = new Map();
const failed = [];
const resolve = async (call) => {
  const key = call.file + '\0' + call.function;
  if (!entries.has(key)) {
    let entry;
    try {
      const namespace = await import(pathToFileURL(call.file).href);
      const holder = call.kind === 'cjs' ? namespace.default : namespace;
      const fn = call.function === 'module.exports' ? holder : holder && holder[call.function];
      if (typeof fn === 'function') entry = { fn, holder };
    } catch (error) {
      const text = call.file + ': ' + ((error && error.name) || typeof error);
      if (!failed.includes(text)) failed.push(text);
    }
    entries.set(key, entry);
  }
  return entries.get(key);
};

const child = async () => {
  process.on('unhandledRejection', () => {});
  const answer = { import_failed: failed, alone: {}, session: {} };
  if (mode === 'alone') {
    const seen = new Set();
    for (const [index, call] of calls) {
      const key = [call.file, call.function, call.args].join('\0');
      if ((call.opaque && !call.promise) || seen.has(key) || seen.size >= ALONE_LIMIT) continue;
      seen.add(key);
      const entry = await resolve(call);
      if (!entry) continue;
      const first = await outcome(entry, call);
      const second = await outcome(entry, call);
      answer.alone[index] = { first: shown(first), second: shown(second),
        agrees: agrees(first, call), repeats: sameOutcome(first, second) };
    }
  } else {
    for (const [index, call] of calls) {
      if (String(call.process) !== target) continue;
      const entry = await resolve(call);
      if (!entry) continue;
      const result = await outcome(entry, call);
      answer.session[index] = { outside: shown(result), agrees: agrees(result, call) };
    }
  }
  fs.writeSync(3, JSON.stringify(answer));
};

const parent = () => {
  const answer = { import_failed: [], alone: {}, session: {} };
  const run = (args) => {
    // This script is started through runSandboxed (replay.ts): its fresh nodes stay in that sandbox.
    const done = spawnSync(process.execPath, [script, ...args], {
      stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
      timeout: CHILD_MS,
    });
    try {
      const part = JSON.parse(String(done.output[3]));
      for (const text of part.import_failed)
        if (!answer.import_failed.includes(text)) answer.import_failed.push(text);
      Object.assign(answer.alone, part.alone);
      Object.assign(answer.session, part.session);
    } catch {
      // a process that died or ran out of time: its calls are not compared
    }
  };
  run(['alone', callsPath]);
  for (const pid of new Set(calls.map(([, call]) => String(call.process))))
    run(['session', callsPath, pid]);
  fs.writeFileSync(target, JSON.stringify(answer));
};

if (mode === 'run') parent();
else child();
`;

export const NODE_REPLAY_FILE = 'coachgate-replay.cjs';
