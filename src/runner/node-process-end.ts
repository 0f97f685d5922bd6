/**
 * JavaScript for coachgate's node watch (src/runner/node-watch.ts): ending the test process is an
 * observed event, as in Python (src/runner/process-end-watch.ts). The process's own functions that
 * end it (`process.exit`, `process.reallyExit`, which `exit` calls, and `process.abort`) are
 * replaced by one that first tells the report, then calls the original; `process.kill` of its own
 * process (its pid, or 0: its group) with a signal whose default action ends it, and no listener
 * for it, is told too. Whatever name or route the code reached the function by (an alias,
 * `Reflect.apply`, a property read with a computed name, a timer), it is the same function, so the
 * call is named with the nearest frame of the project that made it (`projectSite`); a call no frame
 * of the project led to (the runner's own exit at the end) is not told, nor a plain script's own
 * end (its verdict). Only the first end is told: `exit` calls `reallyExit`. `process.exitCode` is
 * not watched: node 20 defines it as a property that cannot be redefined.
 * In scope: `projectSite(callee)`, `tell(record)`, `currentTest()`, `describeAs(wrapper, fn)`.
 */
export const NODE_PROCESS_END_SOURCE = String.raw`const watchProcessEnd = (script) => {
  const ENDING = ['SIGKILL', 'SIGTERM', 'SIGABRT', 'SIGQUIT', 'SIGHUP', 'SIGINT', 'SIGSEGV',
    'SIGBUS'];
  const signals = require('node:os').constants.signals;
  const main = script ? require('node:fs').realpathSync(process.argv[1]) : undefined;
  let told = false;
  const report = (call, callee) => {
    if (told) return;
    const site = projectSite(callee);
    // The script ending itself (its own process.exit(failures ? 1 : 0)) is its verdict.
    if (!site || site.path === main) return;
    told = true;
    tell({ event: 'exit', call, file: site.file, line: site.line, nodeid: currentTest() });
  };
  const shown = (value) => {
    try {
      return value === undefined ? '' : JSON.stringify(value) ?? String(value);
    } catch {
      return '?';
    }
  };
  for (const name of ['exit', 'reallyExit', 'abort']) {
    const original = process[name];
    if (typeof original !== 'function') continue;
    const ending = function (...args) {
      report('process.' + name + '(' + args.map(shown).join(', ') + ')', ending);
      return original.apply(this, args);
    };
    process[name] = describeAs(ending, original);
  }
  const ends = (pid, signal) => {
    if (pid !== process.pid && pid !== 0) return false;
    const name = typeof signal === 'number'
      ? Object.keys(signals).find((each) => signals[each] === signal)
      : signal === undefined ? 'SIGTERM' : String(signal);
    return ENDING.includes(name) && (name === 'SIGKILL' || process.listenerCount(name) === 0);
  };
  const kill = process.kill;
  const killing = function (pid, signal) {
    if (ends(Number(pid), signal))
      report('process.kill(' + shown(pid) + (signal === undefined ? '' : ', ' + shown(signal)) +
        ')', killing);
    return kill.apply(this, arguments);
  };
  process.kill = describeAs(killing, kill);
};
`;
